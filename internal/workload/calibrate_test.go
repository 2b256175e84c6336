package workload

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

var updateCalibration = flag.Bool("update-calibration", false, "rewrite calibration.json from ../../../shared/traces/agentcgroup-haiku")

const sharedTraces = "../../../shared/traces/agentcgroup-haiku"

func act(class string, wait, dur, peak, retain float64) trajectory.Action {
	return trajectory.Action{Wait: wait, Class: class, Mem: &trajectory.MemProfile{PeakMiB: peak, HoldS: dur, RetainMiB: retain, Background: retain > 0}}
}

func TestCalibrate(t *testing.T) {
	wfs := []trajectory.Workflow{
		{ID: "a", Actions: []trajectory.Action{
			act("todowrite", 1, 0.5, 1, 0), // folded into the next wait
			act("test", 2, 10, 200, 20),    // heavy, retains
			act("read", 3, 0.1, 2, 0),
		}},
		{ID: "b", Actions: []trajectory.Action{act("read", 4, 0.2, 4, 0)}},
		{ID: "c", Actions: []trajectory.Action{act("task", 4, 90, 30, 0)}}, // no sandbox action: not a workflow
	}
	c := Calibrate(wfs, "unit")
	if c.Workflows != 2 || c.Actions != 3 {
		t.Fatalf("workflows %d actions %d, want 2 and 3", c.Workflows, c.Actions)
	}
	if math.Abs(c.HeavyShare-1.0/3) > 1e-3 || math.Abs(c.RetainShare-1.0/3) > 1e-3 {
		t.Errorf("heavy share %g retain share %g, want 1/3 each", c.HeavyShare, c.RetainShare)
	}
	if math.Abs(c.BackgroundShare-1.0/3) > 1e-3 {
		t.Errorf("background share %g, want 1/3 (the retaining test leaves a background process)", c.BackgroundShare)
	}
	if got := c.WaitS.Quantile(1); got != 4 {
		t.Errorf("max wait = %g, want 4", got)
	}
	if got := c.WaitS.Quantile(0.5); got != 3.5 {
		t.Errorf("median wait = %g, want 3.5 (2+1+0.5 folded, 3, 4)", got)
	}
	if len(c.Classes) != 2 || c.Classes[0].Class != "read" || c.Classes[1].Class != "test" {
		t.Fatalf("classes = %+v, want read and test", c.Classes)
	}
	if r := c.Classes[0]; r.Light.Count != 2 || r.Heavy.Count != 0 || r.Light.PeakMiB.Quantile(1) != 4 {
		t.Errorf("read = %+v", r)
	}
	if tc := c.Classes[1]; tc.Heavy.Count != 1 || tc.Heavy.DurationS.Quantile(0.5) != 10 {
		t.Errorf("test = %+v", tc)
	}
	if c.ActionsPerWorkflow.Quantile(0) != 1 || c.ActionsPerWorkflow.Quantile(1) != 2 {
		t.Errorf("actions per workflow = %v", c.ActionsPerWorkflow)
	}
}

// importSharedTraces imports the haiku traces, skipping the test without them.
func importSharedTraces(t *testing.T) []trajectory.Workflow {
	t.Helper()
	if _, err := os.Stat(sharedTraces); err != nil {
		t.Skipf("real traces not present at %s: %v", sharedTraces, err)
	}
	wfs, _, err := agentcgroup.Import(sharedTraces)
	if err != nil {
		t.Fatal(err)
	}
	return wfs
}

// TestCalibrationMatchesTraces recomputes the calibration from the shared
// traces and checks the committed calibration.json equals it; with
// -update-calibration it rewrites the file instead.
func TestCalibrationMatchesTraces(t *testing.T) {
	wfs := importSharedTraces(t)
	got := Calibrate(wfs, "agentcgroup-haiku (eunomia-bpf/agentcgroup experiments/all_images_haiku @5af9e7b), imported by internal/trajectory/agentcgroup")
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *updateCalibration {
		if err := os.WriteFile(filepath.Join("calibration.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote calibration.json: %d workflows, %d actions, heavy share %g", got.Workflows, got.Actions, got.HeavyShare)
		return
	}
	if string(b) != string(calibrationJSON) {
		t.Errorf("calibration.json is stale; regenerate with: go test ./internal/workload -run TestCalibrationMatchesTraces -update-calibration")
	}
}
