package gate

import "github.com/tenon-dev/tenon/internal/cgroup"

// FootprintOf is a sandbox's footprint m as Table 5 defines it:
// memory.current + memory.swap.current (v1: usage_in_bytes + swap in use).
func FootprintOf(s cgroup.MemoryStats) int64 { return s.Usage + s.Swap }

// AvailableOf is the domain's available memory M: its budget minus its
// working set (usage less inactive file cache), floored at 0. doc.go explains
// why the working set and not raw usage. A budget <= 0 falls back to the
// group's own limit; with neither, M is 0.
func AvailableOf(budget int64, domain cgroup.MemoryStats) int64 {
	if budget <= 0 {
		budget = domain.Limit
	}
	if budget <= 0 {
		return 0
	}
	return max(budget-domain.WorkingSet, 0)
}
