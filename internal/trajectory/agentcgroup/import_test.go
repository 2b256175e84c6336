package agentcgroup

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// The fixtures in testdata/runs are synthetic: samples one second apart from
// epoch 1700000000 (2023-11-14T22:13:20Z); see the comments per case below.
func importFixtures(t *testing.T) ([]trajectory.Workflow, Report) {
	t.Helper()
	wfs, rep, err := Import(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return wfs, rep
}

func TestImportReport(t *testing.T) {
	wfs, rep := importFixtures(t)
	if rep.Runs != 3 || rep.Imported != 2 || rep.Skipped != 1 || len(wfs) != 2 {
		t.Fatalf("report = %+v, want 3 runs, 2 imported, 1 skipped", rep)
	}
	if s := rep.SkippedRuns[0]; s.Run != "beta__two-2" || s.Reason != "no tool_calls.json" {
		t.Errorf("skipped = %+v, want beta__two-2 without tool_calls.json", s)
	}
	if rep.Actions != 9 {
		t.Errorf("actions = %d, want 9", rep.Actions)
	}
	if wfs[0].ID != "alpha__one-1" || wfs[1].ID != "gamma__three-3.attempt_2" {
		t.Errorf("ids = %q, %q", wfs[0].ID, wfs[1].ID)
	}
	if wfs[0].Image != "example/alpha:1" || wfs[1].Image != "" {
		t.Errorf("images = %q, %q", wfs[0].Image, wfs[1].Image)
	}
}

type wantAction struct {
	name               string
	class              string
	wait, dur          float64
	peak, avg, retain  float64
	before             float64 // what the container held before the call
	background, hintBG bool
}

func TestImportRules(t *testing.T) {
	wfs, _ := importFixtures(t)
	tests := []struct {
		wf   int
		want []wantAction
	}{
		// alpha samples (MiB): 100, 100 (as 104.8576MB), 150, 300, [stopped, dropped], 120, 128 (0.125GiB), 128 (131072KiB), 130
		{0, []wantAction{
			{name: "short call widened to samples 0 and 1; first wait from first sample", class: "read", wait: 0.5, dur: 0.1, before: 100},
			{name: "window 100,150,300,120 against level 100; retains 20 as files (no process evidence)", class: "test", wait: 0.9, dur: 2, peak: 200, avg: 67.5, retain: 20, before: 100},
			{name: "level before is the sample at +5 (120); floor rises to 28", class: "edit", wait: 1.7, dur: 0.1, peak: 8, avg: 4, retain: 8, before: 120},
			{name: "install with run_in_background: a process holds what it retains", class: "install", wait: 1.7, dur: 0.5, peak: 2, avg: 1, retain: 2, background: true, hintBG: true, before: 128},
			{name: "overlapping call waits 0", class: "search", wait: 0, dur: 0.05, peak: 2, avg: 1, before: 128},
			{name: "other tools lowercased; window is samples +7 and +8", class: "todowrite", wait: 0.15, dur: 0.1, peak: 2, avg: 1, before: 128},
		}},
		// gamma samples (MiB): 200, 400, 200, 250, 250
		{1, []wantAction{
			{name: "peak falls back: no retention", class: "build", wait: 0.5, dur: 1, peak: 200, avg: 66.7, before: 200},
			{name: "floor rises 50 above the first level; the command has a lone &: a process holds it", class: "bash", wait: 1, dur: 0.1, peak: 50, avg: 25, retain: 50, background: true, hintBG: true, before: 200},
			{name: "flat", class: "run", wait: 0.6, dur: 0.1, before: 250},
		}},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.051 }
	for _, tt := range tests {
		w := wfs[tt.wf]
		if len(w.Actions) != len(tt.want) {
			t.Fatalf("%s: %d actions, want %d", w.ID, len(w.Actions), len(tt.want))
		}
		for i, want := range tt.want {
			t.Run(want.name, func(t *testing.T) {
				a := w.Actions[i]
				r, m := a.Recorded, a.Mem
				// Retained memory is a background process's only with
				// evidence of one; else it is files (restart-safe).
				process, files := want.retain, 0.0
				if !want.background {
					process, files = 0, want.retain
				}
				if a.Class != want.class || !near(a.Wait, want.wait) || !near(r.DurationS, want.dur) ||
					!near(r.PeakMiB, want.peak) || !near(r.AvgMiB, want.avg) || !near(m.RetainMiB, process) || !near(m.FilesMiB, files) ||
					m.Background != want.background || a.Hints.Background != want.hintBG || !near(r.BeforeMiB, want.before) {
					t.Errorf("action %d = class %s wait %g dur %g peak %g avg %g retain %g files %g bg %v hint %v before %g; want %+v",
						i, a.Class, a.Wait, r.DurationS, r.PeakMiB, r.AvgMiB, m.RetainMiB, m.FilesMiB, m.Background, a.Hints.Background, r.BeforeMiB, want)
				}
				if wantPeak := math.Max(1, math.Max(want.peak, want.retain)); !near(m.PeakMiB, wantPeak) {
					t.Errorf("mem.peak_mib = %g, want %g", m.PeakMiB, wantPeak)
				}
				if wantRamp := math.Min(want.dur/3, MaxRampS); !near(m.RampS, wantRamp) || !near(m.RampS+m.HoldS, want.dur) {
					t.Errorf("ramp %g hold %g, want ramp %g and ramp+hold = %g", m.RampS, m.HoldS, wantRamp, want.dur)
				}
			})
		}
	}
}

func TestImportedRoundTrips(t *testing.T) {
	wfs, _ := importFixtures(t)
	path := filepath.Join(t.TempDir(), "imported.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trajectory.Write(f, wfs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	back, err := trajectory.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(wfs) || back[0].Actions[1].Command != "cd /testbed && python -m pytest tests -x" {
		t.Errorf("round trip lost data: %+v", back)
	}
}

func TestImportNoRuns(t *testing.T) {
	_, _, err := Import(t.TempDir())
	if !errors.Is(err, ErrNoRuns) {
		t.Errorf("err = %v, want ErrNoRuns", err)
	}
}

// TestImportSharedTraces imports the real AgentCgroup traces when the
// checkout sits next to ../shared/traces (as on the project machines).
func TestImportSharedTraces(t *testing.T) {
	wfs, rep := importShared(t, "agentcgroup-haiku")
	if len(wfs) != 45 || rep.Runs != 58 || rep.Skipped != 13 {
		t.Errorf("imported %d workflows of %d runs (%d skipped), want 45 of 58 (13 skipped)", len(wfs), rep.Runs, rep.Skipped)
	}
	if rep.P95PeakMiB <= rep.MedianPeakMiB || rep.MedianWaitS <= 0 {
		t.Errorf("implausible report %+v", rep)
	}
}

// importShared imports ../shared/traces/<set> and logs the summary, or
// skips when the set is not there.
func importShared(t *testing.T, set string) ([]trajectory.Workflow, Report) {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "..", "shared", "traces", set)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real traces not present at %s: %v", dir, err)
	}
	wfs, rep, err := Import(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sb testWriter
	if err := rep.Print(&sb); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", sb)
	return wfs, rep
}

type testWriter []byte

func (w *testWriter) Write(p []byte) (int, error) { *w = append(*w, p...); return len(p), nil }
func (w testWriter) String() string               { return string(w) }
