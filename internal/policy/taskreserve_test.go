package policy

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestTaskReserve(t *testing.T) {
	const heavy = 256 * mib
	k := TaskKey{Task: "t", Class: "test", Command: "pytest", N: 1}
	tests := []struct {
		name             string
		grown, predicted int64
		want             int64 // the next run's predicted peak
	}{
		{"gross under-prediction: its growth", 1600 * mib, 40 * mib, 1600 * mib},
		{"within a heavy action of the prediction: not learned", 290 * mib, 40 * mib, 40 * mib},
		{"over-prediction: not learned", 10 * mib, 400 * mib, 400 * mib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := TaskReserve{}
			r.Learn(k, tc.grown, tc.predicted, heavy)
			d := r.Apply(k, predict.Descriptor{PredPeak: tc.predicted, PredAvg: tc.predicted / 2})
			if d.PredPeak != tc.want {
				t.Fatalf("peak %d MiB, want %d MiB", d.PredPeak/mib, tc.want/mib)
			}
			if d.PredPeak > tc.predicted && (d.PredAvg < d.PredPeak*4/5 || d.HeavyRisk < 1) {
				t.Fatalf("raised descriptor %+v: average and heavy risk not raised", d)
			}
			other := k
			other.N = 0
			if d := r.Apply(other, predict.Descriptor{PredPeak: 1}); d.PredPeak != 1 {
				t.Fatalf("another run of the command got %d", d.PredPeak)
			}
		})
	}
}

func TestTaskKey(t *testing.T) {
	wf := &trajectory.Workflow{ID: "t-r1", Task: "t", Actions: []trajectory.Action{
		{Class: "test", Command: "pytest"},
		{Class: "bash", Command: "ls"},
		{Class: "test", Command: "pytest"},
		{Class: "bash"},
	}}
	k, ok := taskKey(wf, 2)
	if want := (TaskKey{Task: "t", Class: "test", Command: "pytest", N: 1}); !ok || k != want {
		t.Fatalf("key %+v %v, want %+v", k, ok, want)
	}
	if k0, _ := taskKey(wf, 0); k0.N != 0 {
		t.Fatalf("first run counted %d before it", k0.N)
	}
	if _, ok := taskKey(wf, 3); ok {
		t.Fatal("an action without a command got a key")
	}
	if _, ok := taskKey(wf, 4); ok {
		t.Fatal("an index past the workflow got a key")
	}
}

// TestTaskReserveWiring: an agent's action seen at a gate period to have
// grown far past its prediction makes another agent of the same task,
// running the same command at the same place, wait as heavy with that
// growth as its peak; another task's agent, and task-reserve=off, do not.
func TestTaskReserveWiring(t *testing.T) {
	for _, off := range []bool{false, true} {
		m := mustMachine(t, Config{Spec: Spec{Name: "tenon", Gate: true, Admission: true, Predictor: PredCurrent},
			Budget: 2 << 30, Model: constPred{peak: 40 << 20}, NoTaskReserve: off})
		obs := &fakeObs{avail: 2 << 30, mem: map[string]int64{"sa": 10 << 20, "sb": 10 << 20, "sc": 10 << 20}}
		wf := func(id, task string) *trajectory.Workflow {
			return &trajectory.Workflow{ID: id, Task: task, Actions: []trajectory.Action{{Class: "test", Command: "pytest",
				Mem: &trajectory.MemProfile{PeakMiB: 10, RampS: 1, HoldS: 1}}}}
		}
		submit(t, m, 0, "a", wf("a", "t"), obs)
		act := &trajectory.Action{Class: "test", Command: "pytest"}
		if _, _, err := m.ActionReady(at(0), "a", 0, act, "sa"); err != nil {
			t.Fatal(err)
		}
		if g := m.Schedule(at(0), obs); len(g) != 1 || g[0].Heavy {
			t.Fatalf("a: %+v, want admitted light", g)
		}
		obs.mem["sa"] = 10<<20 + 1500<<20
		m.Sample(at(100), Observation{Available: 2 << 30, Sandboxes: []gate.Sample{{ID: "sa", Footprint: obs.mem["sa"]}}})
		cases := []struct {
			id, sb, task string
			want         int64
		}{{"b", "sb", "t", 1500 << 20}, {"c", "sc", "other", 40 << 20}}
		for _, c := range cases {
			submit(t, m, 200, c.id, wf(c.id, c.task), obs)
		}
		for _, c := range cases {
			want := c.want
			if off {
				want = 40 << 20
			}
			if _, _, err := m.ActionReady(at(200), c.id, 0, act, c.sb); err != nil {
				t.Fatal(err)
			}
			if got := m.agents[c.id].peak; got != want {
				t.Errorf("off=%v: %s (task %s) predicted %d MiB, want %d MiB", off, c.id, c.task, got>>20, want>>20)
			}
		}
	}
}
