package workload

import (
	"errors"
	"math"
	"reflect"
	"sort"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// shapeStats are the quantities a real-shape workload must share with the
// traces.
type shapeStats struct {
	medianActions, medianPeak, p90Peak, medianWait float64
}

func quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return quantileSorted(s, q)
}

func statsOf(wfs []trajectory.Workflow) shapeStats {
	var counts, peaks, waits []float64
	for _, w := range wfs {
		counts = append(counts, float64(len(w.Actions)))
		for _, a := range w.Actions {
			peaks = append(peaks, a.PeakMiB())
			waits = append(waits, a.Wait)
		}
	}
	return shapeStats{quantile(counts, 0.5), quantile(peaks, 0.5), quantile(peaks, 0.9), quantile(waits, 0.5)}
}

// calibrationStats reads the same quantities off a calibration: the action
// peaks are the classes' light and heavy quantile points, each weighted by
// its population's count.
func calibrationStats(c Calibration) shapeStats {
	type point struct{ v, w float64 }
	var pts []point
	var total float64
	for _, cc := range c.Classes {
		for _, p := range []Population{cc.Light, cc.Heavy} {
			for _, v := range p.PeakMiB {
				w := float64(p.Count) / float64(len(p.PeakMiB))
				pts = append(pts, point{v, w})
				total += w
			}
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].v < pts[j].v })
	at := func(q float64) float64 {
		var acc float64
		for _, p := range pts {
			if acc += p.w; acc >= q*total {
				return p.v
			}
		}
		return pts[len(pts)-1].v
	}
	return shapeStats{c.ActionsPerWorkflow.Quantile(0.5), at(0.5), at(0.9), c.WaitS.Quantile(0.5)}
}

// Tolerances of a real-shape workload against its reference, as relative
// errors: 200 workflows of about 20 actions each.
var shapeTolerance = shapeStats{medianActions: 0.15, medianPeak: 0.25, p90Peak: 0.25, medianWait: 0.15}

func checkShape(t *testing.T, got, want shapeStats, what string) {
	t.Helper()
	for _, f := range []struct {
		name           string
		got, want, tol float64
	}{
		{"median actions per workflow", got.medianActions, want.medianActions, shapeTolerance.medianActions},
		{"median action peak MiB", got.medianPeak, want.medianPeak, shapeTolerance.medianPeak},
		{"P90 action peak MiB", got.p90Peak, want.p90Peak, shapeTolerance.p90Peak},
		{"median wait s", got.medianWait, want.medianWait, shapeTolerance.medianWait},
	} {
		if math.Abs(f.got-f.want) > f.tol*f.want {
			t.Errorf("%s: %g, %s %g (tolerance %.0f %%)", f.name, f.got, what, f.want, 100*f.tol)
		}
	}
}

func TestRealShapeMatchesCalibration(t *testing.T) {
	cal, err := DefaultCalibration()
	if err != nil {
		t.Fatal(err)
	}
	got := statsOf(mustGenerate(t, KindSWE+RealSuffix, 200, 1, Options{}))
	want := calibrationStats(cal)
	t.Logf("generated %+v, calibration %+v", got, want)
	checkShape(t, got, want, "calibration")
}

// TestRealShapeMatchesTraces compares a real-shape workload with the sandbox
// actions of the imported traces themselves (skipped without them).
func TestRealShapeMatchesTraces(t *testing.T) {
	wfs := importSharedTraces(t)
	sandbox := map[string]bool{}
	for _, c := range SandboxClasses {
		sandbox[c] = true
	}
	var kept []trajectory.Workflow
	for _, w := range wfs {
		var acts []trajectory.Action
		carry := 0.0 // harness-side calls fold into the next wait, as Calibrate does
		for _, a := range w.Actions {
			if !sandbox[a.Class] {
				carry += a.Wait + a.DurationS()
				continue
			}
			a.Wait += carry
			carry = 0
			acts = append(acts, a)
		}
		if len(acts) > 0 {
			w.Actions = acts
			kept = append(kept, w)
		}
	}
	got := statsOf(mustGenerate(t, KindSWE+RealSuffix, 200, 1, Options{}))
	want := statsOf(kept)
	t.Logf("generated %+v, traces %+v", got, want)
	checkShape(t, got, want, "traces")
}

func TestRealShapeIsKindWithCaps(t *testing.T) {
	real := mustGenerate(t, KindSWE+RealSuffix, 20, 3, Options{QPS: 2})
	plain := mustGenerate(t, KindSWE, 20, 3, Options{QPS: 2, MaxPeakMiB: RealMaxPeakMiB, MaxWaitS: RealMaxWaitS})
	for i := range real {
		if real[i].Kind != "swe-real" || real[i].ID != plain[i].ID[:len("swe")]+RealSuffix+plain[i].ID[len("swe"):] {
			t.Fatalf("workflow %d: kind %q id %q", i, real[i].Kind, real[i].ID)
		}
		if !reflect.DeepEqual(real[i].Actions, plain[i].Actions) {
			t.Errorf("workflow %d: swe-real differs from swe with the real-shape caps", i)
		}
		for _, a := range real[i].Actions {
			if a.Mem.PeakMiB > RealMaxPeakMiB || a.Wait > RealMaxWaitS {
				t.Errorf("%s: action over the caps: peak %g wait %g", real[i].ID, a.Mem.PeakMiB, a.Wait)
			}
		}
	}
}

func TestRealShapeRejectsReshaping(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"mem scale", Options{MemScale: 10}},
		{"heavy share", Options{HeavyShare: 0.25}},
		{"action bounds", Options{MinActions: 3, MaxActions: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Generate("swe-real", 4, 1, tc.o); !errors.Is(err, ErrBadOptions) {
				t.Errorf("err = %v, want ErrBadOptions", err)
			}
		})
	}
	if _, err := Generate("bogus-real", 4, 1, Options{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("bogus-real: err = %v, want ErrUnknownKind", err)
	}
}
