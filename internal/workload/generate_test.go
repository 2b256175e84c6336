package workload

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

func mustGenerate(t *testing.T, kind string, n int, seed int64, o Options) []trajectory.Workflow {
	t.Helper()
	wfs, err := Generate(kind, n, seed, o)
	if err != nil {
		t.Fatalf("Generate(%s, %d, %d): %v", kind, n, seed, err)
	}
	return wfs
}

func TestGenerateValidAndReplayable(t *testing.T) {
	for _, kind := range []string{KindSWE, KindScience, KindRL} {
		t.Run(kind, func(t *testing.T) {
			wfs := mustGenerate(t, kind, 20, 7, Options{})
			if err := trajectory.Write(discard{}, wfs); err != nil {
				t.Fatalf("generated workload does not validate: %v", err)
			}
			for _, w := range wfs {
				if w.Kind != kind {
					t.Errorf("%s: kind %q", w.ID, w.Kind)
				}
				for i, a := range w.Actions {
					m, r := a.Mem, a.Recorded
					if m == nil || a.Run != "" || r == nil || a.Command == "" || a.Class == "" {
						t.Fatalf("%s action %d is not a Mem profile with class, command and record: %+v", w.ID, i, a)
					}
					if r.PeakMiB != m.PeakMiB || math.Abs(r.DurationS-(m.RampS+m.HoldS)) > 1e-3 || r.AvgMiB > r.PeakMiB {
						t.Errorf("%s action %d: recorded %+v does not match profile %+v", w.ID, i, *r, *m)
					}
				}
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestGenerateDeterministic(t *testing.T) {
	for _, kind := range []string{KindSWE, KindScience, KindRL} {
		t.Run(kind, func(t *testing.T) {
			o := Options{MemScale: 4, QPS: 2}
			a, b := mustGenerate(t, kind, 10, 42, o), mustGenerate(t, kind, 10, 42, o)
			if !reflect.DeepEqual(a, b) {
				t.Error("same seed gave different workloads")
			}
			if c := mustGenerate(t, kind, 10, 43, o); reflect.DeepEqual(a, c) {
				t.Error("different seeds gave the same workload")
			}
			if kind != KindRL {
				longer := mustGenerate(t, kind, 15, 42, o)
				if !reflect.DeepEqual(a, longer[:10]) {
					t.Error("workflow i depends on n")
				}
			}
		})
	}
}

func TestGenerateDuplicate(t *testing.T) {
	wfs := mustGenerate(t, KindSWE, 8, 3, Options{Duplicate: true, QPS: 4})
	for i, w := range wfs[1:] {
		if !reflect.DeepEqual(w.Actions, wfs[0].Actions) {
			t.Errorf("workflow %d differs from workflow 0", i+1)
		}
	}
	if wfs[1].ID == wfs[0].ID || wfs[1].Arrival != 0.25 {
		t.Errorf("duplicates must keep distinct ids and arrivals: %s %g", wfs[1].ID, wfs[1].Arrival)
	}
	if !reflect.DeepEqual(mustGenerate(t, KindSWE, 1, 3, Options{})[0].Actions, wfs[0].Actions) {
		t.Error("the duplicated workflow is not the seed's first workflow")
	}
}

func TestGenerateArrivals(t *testing.T) {
	tests := []struct {
		name  string
		kind  string
		n     int
		o     Options
		count int
		at    map[int]float64
	}{
		{"paper burst: 7.2 QPS over 10 s", KindSWE, 0, Options{QPS: 7.2, Window: 10}, 72, map[int]float64{0: 0, 1: 0.139, 71: 9.861}},
		{"qps with explicit n", KindScience, 5, Options{QPS: 0.5}, 5, map[int]float64{4: 8}},
		{"window only spreads evenly", KindSWE, 4, Options{Window: 10}, 4, map[int]float64{1: 2.5, 3: 7.5}},
		{"no load: all at 0", KindSWE, 3, Options{}, 3, map[int]float64{2: 0}},
		{"rl arrives together", KindRL, 6, Options{QPS: 7.2}, 6, map[int]float64{5: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wfs := mustGenerate(t, tt.kind, tt.n, 1, tt.o)
			if len(wfs) != tt.count {
				t.Fatalf("%d workflows, want %d", len(wfs), tt.count)
			}
			for i, want := range tt.at {
				if math.Abs(wfs[i].Arrival-want) > 1e-3 {
					t.Errorf("workflow %d arrives at %g, want %g", i, wfs[i].Arrival, want)
				}
			}
		})
	}
}

// heavyStarts returns the start offsets (from arrival) of actions at or above minMiB.
func heavyStarts(w trajectory.Workflow, minMiB float64) []float64 {
	var t float64
	var out []float64
	for _, a := range w.Actions {
		t += a.Wait
		if a.PeakMiB() >= minMiB {
			out = append(out, round(t, 3))
		}
		t += a.DurationS()
	}
	return out
}

func TestGenerateRLHeavyActionsLineUp(t *testing.T) {
	wfs := mustGenerate(t, KindRL, 10, 5, Options{})
	want := heavyStarts(wfs[0], HeavyMiB)
	if len(want) == 0 {
		t.Fatal("rl workflow has no heavy action")
	}
	if last := wfs[0].Actions[len(wfs[0].Actions)-1]; last.Class != "test" || last.PeakMiB() < HeavyMiB {
		t.Errorf("rl workflow must end with a heavy test, ends with %s %g MiB", last.Class, last.PeakMiB())
	}
	differ := false
	for _, w := range wfs[1:] {
		if got := heavyStarts(w, HeavyMiB); !reflect.DeepEqual(got, want) {
			t.Errorf("%s heavy actions start at %v, want %v", w.ID, got, want)
		}
		differ = differ || !reflect.DeepEqual(w.Actions, wfs[0].Actions)
	}
	if !differ {
		t.Error("rl rollouts are all identical without Duplicate")
	}
}

func TestScienceIsHeavierThanSWE(t *testing.T) {
	stats := func(kind string) (actions, area float64) {
		wfs := mustGenerate(t, kind, 60, 11, Options{})
		var n float64
		for _, w := range wfs {
			for _, a := range w.Actions {
				n++
				area += a.PeakMiB() * a.DurationS()
			}
		}
		return n / float64(len(wfs)), area / n
	}
	sweN, sweArea := stats(KindSWE)
	sciN, sciArea := stats(KindScience)
	if sciN >= sweN || sciArea <= 2*sweArea {
		t.Errorf("science: %.1f actions/workflow, %.0f MiB·s/action; swe: %.1f, %.0f; want fewer, heavier science actions", sciN, sciArea, sweN, sweArea)
	}
}

func TestGenerateScalingAndBounds(t *testing.T) {
	base := mustGenerate(t, KindSWE, 10, 9, Options{})
	tests := []struct {
		name  string
		o     Options
		check func(t *testing.T, b, a trajectory.Action)
	}{
		{"MemScale doubles peaks", Options{MemScale: 2}, func(t *testing.T, b, a trajectory.Action) {
			if want := max(1, 2*b.Mem.PeakMiB); math.Abs(a.Mem.PeakMiB-want) > 0.2+0.001*want {
				t.Errorf("peak %g, want about %g", a.Mem.PeakMiB, want)
			}
		}},
		{"MaxPeakMiB caps", Options{MemScale: 10, MaxPeakMiB: 100}, func(t *testing.T, b, a trajectory.Action) {
			if a.Mem.PeakMiB > 100 || a.Mem.RetainMiB > a.Mem.PeakMiB {
				t.Errorf("peak %g retain %g above the cap", a.Mem.PeakMiB, a.Mem.RetainMiB)
			}
		}},
		{"TimeScale shrinks waits and durations", Options{TimeScale: 0.5}, func(t *testing.T, b, a trajectory.Action) {
			if math.Abs(a.Wait-b.Wait/2) > 0.002 || a.DurationS() > b.DurationS() {
				t.Errorf("wait %g→%g duration %g→%g", b.Wait, a.Wait, b.DurationS(), a.DurationS())
			}
		}},
		{"MaxWaitS and MaxDurationS cap", Options{MaxWaitS: 1, MaxDurationS: 2}, func(t *testing.T, b, a trajectory.Action) {
			if a.Wait > 1 || a.DurationS() > 2.001 {
				t.Errorf("wait %g duration %g above the caps", a.Wait, a.DurationS())
			}
		}},
		{"ramp rate bounds the ramp", Options{MemScale: 50, RampMiBps: 100}, func(t *testing.T, b, a trajectory.Action) {
			if a.Mem.RampS < a.Mem.PeakMiB/100-0.001 {
				t.Errorf("ramp %g s for %g MiB is faster than 100 MiB/s", a.Mem.RampS, a.Mem.PeakMiB)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustGenerate(t, KindSWE, 10, 9, tt.o)
			for i := range got {
				for j := range got[i].Actions {
					tt.check(t, base[i].Actions[j], got[i].Actions[j])
				}
			}
		})
	}
}

func TestGenerateActionBounds(t *testing.T) {
	for _, kind := range []string{KindSWE, KindScience} {
		for _, w := range mustGenerate(t, kind, 30, 2, Options{MinActions: 6, MaxActions: 10}) {
			if n := len(w.Actions); n < 6 || n > 10 {
				t.Errorf("%s has %d actions, want 6..10", w.ID, n)
			}
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name string
		kind string
		n    int
		o    Options
		want error
	}{
		{"unknown kind", "web", 3, Options{}, ErrUnknownKind},
		{"no workflows", KindSWE, 0, Options{}, ErrBadOptions},
		{"negative time scale", KindSWE, 3, Options{TimeScale: -1}, ErrBadOptions},
		{"min above max actions", KindSWE, 3, Options{MinActions: 5, MaxActions: 2}, ErrBadOptions},
		{"small negative cap", KindSWE, 3, Options{MaxWaitS: -0.5}, ErrBadOptions},
		{"negative qps", KindSWE, 3, Options{QPS: -1}, ErrBadOptions},
		{"heavy share above 1", KindSWE, 3, Options{HeavyShare: 1.5}, ErrBadOptions},
		{"empty calibration", KindSWE, 3, Options{Calibration: &Calibration{}}, ErrEmptyCalibration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Generate(tt.kind, tt.n, 1, tt.o); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestDist(t *testing.T) {
	d := NewDist([]float64{4, 0, 2})
	tests := []struct {
		q, want float64
	}{{0, 0}, {0.25, 1}, {0.5, 2}, {1, 4}, {1.5, 4}}
	for _, tt := range tests {
		if got := d.Quantile(tt.q); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Quantile(%g) = %g, want %g", tt.q, got, tt.want)
		}
	}
	if m := d.Mean(); math.Abs(m-2) > 1e-9 {
		t.Errorf("Mean = %g, want 2 (integral of the interpolated quantile function)", m)
	}
	if NewDist(nil) != nil || Dist(nil).Sample(0.5) != 0 {
		t.Error("empty dist should be nil and sample 0")
	}
}

// TestGenerateRetainedMemory: retained memory is a background process's
// only in the calibrated background share of the actions (the traces'
// evidence of a process outliving the call); otherwise it is files, and
// the sandbox stays restart-safe. The other draws do not depend on it.
func TestGenerateRetainedMemory(t *testing.T) {
	base, err := DefaultCalibration()
	if err != nil {
		t.Fatal(err)
	}
	count := func(c Calibration) (bg, files, n int, wfs []trajectory.Workflow) {
		wfs = mustGenerate(t, KindSWE, 40, 3, Options{Calibration: &c})
		for _, w := range wfs {
			for _, a := range w.Actions {
				n++
				switch {
				case a.Mem.Background:
					if a.Mem.RetainMiB <= 0 || a.Mem.FilesMiB != 0 {
						t.Fatalf("%s: background action %+v holds no retained memory or holds files", w.ID, *a.Mem)
					}
					bg++
				case a.Mem.FilesMiB > 0:
					if a.Mem.RetainMiB != 0 {
						t.Fatalf("%s: files action %+v also retains in a process", w.ID, *a.Mem)
					}
					files++
				}
			}
		}
		return bg, files, n, wfs
	}
	none, all := base, base
	none.BackgroundShare, all.BackgroundShare = 0, base.RetainShare
	bg0, files0, n, w0 := count(none)
	bg1, files1, _, w1 := count(all)
	if bg0 != 0 || files0 == 0 {
		t.Errorf("background share 0: %d background, %d files actions; want none and some", bg0, files0)
	}
	if files1 != 0 || bg1 != files0 {
		t.Errorf("background share = retain share: %d background, %d files; want %d and none", bg1, files1, files0)
	}
	if share := float64(files0) / float64(n); math.Abs(share-base.RetainShare) > 0.08 {
		t.Errorf("retaining share %.3f, calibrated %.3f", share, base.RetainShare)
	}
	for i := range w0 {
		for j := range w0[i].Actions {
			a, b := w0[i].Actions[j], w1[i].Actions[j]
			if a.Wait != b.Wait || a.Command != b.Command || a.Mem.PeakMiB != b.Mem.PeakMiB || a.Mem.RetainMiB+a.Mem.FilesMiB != b.Mem.RetainMiB+b.Mem.FilesMiB {
				t.Fatalf("%s action %d differs beyond how its memory is held: %+v / %+v", w0[i].ID, j, a, b)
			}
		}
	}
}
