package workload

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

var updateWorkload = flag.Bool("update-workload", false, "rewrite ../../workloads/default.jsonl")

const defaultWorkloadPath = "../../workloads/default.jsonl"

// The bundled default workload's arguments; workloads/README.md repeats them.
const (
	defaultKind  = KindSWE
	defaultN     = 12
	defaultSeed  = 2
	defaultQPS   = 1.2
	defaultBytes = 2 * units.GiB // the budget it is sized for
)

var defaultOptions = Options{
	MemScale: 14, MaxPeakMiB: 1200, HeavyShare: 0.2,
	MinActions: 6, MaxActions: 10,
	TimeScale: 1, WaitScale: 0.5, MaxWaitS: 8,
	MinDurationS: 0.2, MaxDurationS: 20,
	QPS: defaultQPS,
}

// TestDefaultWorkload regenerates workloads/default.jsonl, checks the file
// matches byte for byte (rewrite it with -update-workload) and checks it is
// sized as promised: 12 workflows of 6–10 actions, peaks <= 1.2 GiB,
// profiled peaks 4–9× a 2 GiB budget, a makespan lower bound of 40–90 s.
func TestDefaultWorkload(t *testing.T) {
	wfs, err := Generate(defaultKind, defaultN, defaultSeed, defaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := trajectory.Write(&buf, wfs); err != nil {
		t.Fatal(err)
	}
	if *updateWorkload {
		if err := os.WriteFile(defaultWorkloadPath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onDisk, err := os.ReadFile(defaultWorkloadPath)
	if err != nil {
		t.Fatalf("reading the bundled workload: %v", err)
	}
	if !bytes.Equal(onDisk, buf.Bytes()) {
		t.Fatalf("%s differs from the generator's output; regenerate with: go test ./internal/workload -run TestDefaultWorkload -update-workload", defaultWorkloadPath)
	}
	loaded, err := trajectory.Load(bytes.NewReader(onDisk))
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 12 {
		t.Errorf("%d workflows, want 12", len(loaded))
	}
	for _, w := range loaded {
		if n := len(w.Actions); n < 6 || n > 10 {
			t.Errorf("%s: %d actions, want 6..10", w.ID, n)
		}
		if p := w.PeakMiB(); p > 1229 {
			t.Errorf("%s: action peak %g MiB above 1.2 GiB", w.ID, p)
		}
	}
	over := trajectory.Oversubscription(loaded, defaultBytes)
	lb := trajectory.LowerBound(loaded, defaultBytes)
	t.Logf("default workload: oversubscription %.2f× of 2 GiB, lower bound %.1f s", over, lb)
	if over < 4 || over > 9 {
		t.Errorf("oversubscription %.2f, want 4..9 at 2 GiB", over)
	}
	if lb < 40 || lb > 90 {
		t.Errorf("makespan lower bound %.1f s, want 40..90 s", lb)
	}
}
