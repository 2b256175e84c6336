package policy

import (
	"slices"

	"github.com/tenon-dev/tenon/internal/gate"
)

// The freezing hold is the OOM hold where the kernel's hold does not stop
// an allocator (cgroup v2: memory.high only throttles it, so several
// throttled growers cross the last eighth to memory.max together and are
// killed there). It adds the stop v1's oom_kill_disable has: once the
// domain is above the hold line with its tasks stalled on memory
// (Observation.UnderOOM), every sandbox whose footprint grew since the
// previous period (the allocators, throttled there) is frozen, so nothing
// reaches memory.max; and while any sandbox is held so, the hold counts as
// waiting, as a v1 task sleeping in the OOM wait does. The frozen sandboxes
// are thawed one per period, oldest first, once the domain is back at or
// below the line (Observation.AboveHoldLine false: others finished, or
// residency paged an idle one out), so one allocator at a time grows into
// what was freed; it is frozen again if it crosses the line again. When the
// hold is released (its timeout with nothing progressing, or MaxWait) every
// held sandbox is thawed at once: the kernel's OOM killer then picks its
// victim as it would have without the hold. The held sandboxes are denied
// on top of the gate's decision; thawing one gives it back to the gate.

// HoldGrowth is the footprint growth over one period that marks a sandbox
// as an allocator for the freezing hold: the kernel's charge batch
// (256 KiB) above which an allocator over memory.high is throttled, so
// page-table and slab noise of an idle sandbox does not count.
const HoldGrowth = 256 << 10

// holdFreezer is the freezing hold's state: which sandboxes it holds.
type holdFreezer struct {
	held  []string         // frozen by the hold, oldest first
	last  map[string]int64 // footprints at the previous sample
	froze uint64           // sandboxes frozen so far
}

// step updates the held set for one period: state is the hold's state
// after its step this period, under and above the domain's observation
// (Observation.UnderOOM, Observation.AboveHoldLine), smp every live
// sandbox, skip the sandboxes the hold preempted (never held).
func (f *holdFreezer) step(state holdState, under, above bool, smp []gate.Sample, skip map[string]bool) {
	prev := f.last
	f.last = make(map[string]int64, len(smp))
	live := make(map[string]bool, len(smp))
	for _, s := range smp {
		f.last[s.ID] = s.Footprint
		live[s.ID] = !s.Done
	}
	f.held = slices.DeleteFunc(f.held, func(id string) bool { return !live[id] || skip[id] })
	switch {
	case state != holdWaiting:
		// Armed with nothing waiting, or released to the OOM killer:
		// nothing is held.
		f.held = nil
	case under:
		for _, s := range smp {
			if p, seen := prev[s.ID]; seen && !s.Done && !skip[s.ID] && s.Footprint-p >= HoldGrowth && !slices.Contains(f.held, s.ID) {
				f.held = append(f.held, s.ID)
				f.froze++
			}
		}
	case !above && len(f.held) > 0:
		f.held = f.held[1:]
	}
}

// holding reports whether the hold holds any sandbox.
func (f *holdFreezer) holding() bool { return len(f.held) > 0 }

// deny adds the held sandboxes' denials to the gate's decision d.
func (f *holdFreezer) deny(d *gate.Decision) {
	if len(f.held) == 0 {
		return
	}
	for i := range d.Sandboxes {
		if sd := &d.Sandboxes[i]; sd.Allowed && slices.Contains(f.held, sd.ID) {
			deny(d, sd)
		}
	}
}
