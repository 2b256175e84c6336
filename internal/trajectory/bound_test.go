package trajectory

import (
	"math"
	"testing"

	"github.com/tenon-dev/tenon/internal/units"
)

func held(wait, peak, hold float64) Action {
	return Action{Wait: wait, Class: "x", Mem: &MemProfile{PeakMiB: peak, HoldS: hold}}
}

func flow(id string, arrival float64, acts ...Action) Workflow {
	return Workflow{ID: id, Arrival: arrival, Actions: acts}
}

// copies is n workflows made by mk.
func copies(n int, mk func(id string) Workflow) []Workflow {
	var wfs []Workflow
	for i := range n {
		wfs = append(wfs, mk(string(rune('a'+i))))
	}
	return wfs
}

func TestLowerBound(t *testing.T) {
	ramped := func(id string) Workflow { // 1 s wait, ramp to 1 GiB over 2 s, hold 8 s
		return flow(id, 0, Action{Wait: 1, Class: "x", Mem: &MemProfile{PeakMiB: 1024, RampS: 2, HoldS: 8}})
	}
	pinning := func(id string) Workflow { // 512 MiB for 1 s, kept by a background process over an 8 s wait
		return flow(id, 0, Action{Class: "x", Mem: &MemProfile{PeakMiB: 512, HoldS: 1, RetainMiB: 512, Background: true}},
			Action{Wait: 8, Class: "x", Run: "true"})
	}
	filesOnly := func(id string) Workflow { // the same 512 MiB left as files
		return flow(id, 0, Action{Class: "x", Mem: &MemProfile{PeakMiB: 512, HoldS: 1, FilesMiB: 512}},
			Action{Wait: 8, Class: "x", Run: "true"})
	}
	filesUnder := func(id string) Workflow { // 512 MiB for 1 s, then 256 MiB of files under 256 MiB for 4 s
		return flow(id, 0, Action{Class: "x", Mem: &MemProfile{PeakMiB: 512, HoldS: 1, FilesMiB: 256}}, held(0, 256, 4))
	}
	recorded := func(avg float64) func(string) Workflow {
		return func(id string) Workflow {
			return flow(id, 0, Action{Class: "x", Run: "make", Recorded: &Recorded{DurationS: 4, PeakMiB: 1024, AvgMiB: avg}})
		}
	}
	tests := []struct {
		name   string
		wfs    []Workflow
		budget int64
		opts   BoundOptions
		want   float64 // the optimum where the comment says so
	}{
		// Optimum: run alone, 2 + 1 + 3 + 3 + 1.
		{"one workflow: its length", []Workflow{flow("a", 2,
			Action{Wait: 1, Class: "x", Mem: &MemProfile{PeakMiB: 100, RampS: 1, HoldS: 2}}, held(3, 50, 1))},
			units.GiB, BoundOptions{}, 10},
		{"one workflow: creation counts", []Workflow{flow("a", 2, held(1, 100, 3), held(3, 50, 1))},
			units.GiB, BoundOptions{CreateS: 0.1}, 10.1},
		// Optimum: one after the other, 10 + 10.
		{"two at the budget cannot overlap", copies(2, func(id string) Workflow { return flow(id, 0, held(0, 1024, 10)) }),
			units.GiB, BoundOptions{}, 20},
		// Optimum 21: the second cannot start its ramp while the first holds
		// the budget. The ramps count as triangles (1 + 2×9216/1024 = 19);
		// charging the peak over them would claim 20.
		{"ramps count as triangles", copies(2, ramped), units.GiB, BoundOptions{}, 19},
		// Ten 3 s ramps to half the budget, one started every second, hold at
		// most three at ⅓, ⅔ and all of their peak, the budget, and finish
		// at 12 s: peak × duration would claim 10 × 512 × 3 / 1024 = 15.
		{"staggered ramps pack closer than their peaks", copies(10, func(id string) Workflow {
			return flow(id, 0, Action{Class: "x", Mem: &MemProfile{PeakMiB: 512, RampS: 3}})
		}), units.GiB, BoundOptions{}, 7.5},
		// Optimum: two at a time, 10 + 10.
		{"memory-bound: four at half the budget", copies(4, func(id string) Workflow { return flow(id, 0, held(0, 512, 10)) }),
			units.GiB, BoundOptions{}, 20},
		// Optimum: a at 0, b at 10, c at 15.
		{"late arrivals fill the time after them", []Workflow{
			flow("a", 0, held(0, 1024, 5)), flow("b", 10, held(0, 1024, 5)), flow("c", 10, held(0, 1024, 5))},
			units.GiB, BoundOptions{}, 20},
		// Optimum without swap: two at a time, each holding 512 MiB for 9 s.
		{"a background process holds through the wait", copies(4, pinning), units.GiB, BoundOptions{PinnedIdle: 1}, 18},
		// With page-out the wait holds a compressed third: 4×(512×1 + 512/3×8)/1024 = 7.33 < 9, the longest workflow.
		{"a paged-out background process holds its compressed copy", copies(4, pinning), units.GiB, BoundOptions{PinnedIdle: 1.0 / 3}, 9},
		// Not knowing the host, the wait counts nothing.
		{"a background process, host unknown", copies(4, pinning), units.GiB, BoundOptions{}, 9},
		// Residency may tear the idle sandbox down: only the 1 s actions count (4×512/1024 = 2 < 9).
		{"files alone do not hold through the wait", copies(4, filesOnly), units.GiB, BoundOptions{}, 9},
		// Optimum: one after the other, each at the budget for 5 s.
		{"files stay under the later actions", copies(2, filesUnder), 512 * units.MiB, BoundOptions{}, 10},
		// Optimum: one after the other; a sandbox's 512 MiB appears after its 0.1 s creation.
		{"sandbox base memory", copies(2, func(id string) Workflow { return flow(id, 0, held(0, 512, 10)) }),
			units.GiB, BoundOptions{SandboxBase: 512 * units.MiB, CreateS: 0.1}, 20.1},
		// 4 × min(512, ¾×1024) × 4 s / 1024 MiB.
		{"run action: the recorded average", copies(4, recorded(512)), units.GiB, BoundOptions{}, 8},
		// 4 × min(1000, ¾×1024) × 4 s / 1024 MiB: the simulator's curve holds less.
		{"run action: the simulator's curve", copies(4, recorded(1000)), units.GiB, BoundOptions{}, 12},
		{"run action without a record", copies(4, func(id string) Workflow { return flow(id, 0, Action{Wait: 1, Class: "x", Run: "true"}) }),
			units.GiB, BoundOptions{}, 1},
		{"no budget: the longest workflow", copies(4, pinning), 0, BoundOptions{CreateS: 0.5}, 9.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LowerBoundWith(tt.wfs, tt.budget, tt.opts)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("LowerBoundWith = %g, want %g", got, tt.want)
			}
			if plain := LowerBound(tt.wfs, tt.budget); tt.opts == (BoundOptions{}) && plain != got {
				t.Errorf("LowerBound = %g, LowerBoundWith with no options %g", plain, got)
			}
		})
	}
}

// TestRestartableBoundaries: a boundary after each action but the last;
// restartable until an action leaves a background process holding memory.
func TestRestartableBoundaries(t *testing.T) {
	bg := func(retain float64, mem, hint bool) Action {
		a := held(1, 10, 1)
		a.Mem.RetainMiB, a.Mem.Background, a.Hints.Background = retain, mem, hint
		return a
	}
	files := held(1, 10, 1)
	files.Mem.FilesMiB = 5
	tests := []struct {
		name               string
		acts               []Action
		restartable, total int
	}{
		{"one action: no boundary", []Action{held(1, 10, 1)}, 0, 0},
		{"files and retention without a process stay restartable", []Action{files, bg(5, false, false), held(1, 1, 1)}, 2, 2},
		{"background process pins the rest", []Action{held(1, 1, 1), bg(5, true, false), held(1, 1, 1), held(1, 1, 1)}, 1, 3},
		{"hint with retained memory pins", []Action{bg(5, false, true), held(1, 1, 1)}, 0, 1},
		{"background holding nothing does not pin", []Action{bg(0, true, true), held(1, 1, 1)}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, n := flow("w", 0, tt.acts...).RestartableBoundaries()
			if r != tt.restartable || n != tt.total {
				t.Errorf("restartable %d of %d, want %d of %d", r, n, tt.restartable, tt.total)
			}
		})
	}
}
