package node

import "time"

// Cause is why an adopted container's task was OOM-killed.
type Cause string

// The causes ClassifyOOM tells apart.
const (
	// CauseContainerLimit: the container reached its own memory limit
	// (the pod spec's limits.memory); tenon's budget had room.
	CauseContainerLimit Cause = "container-limit"
	// CauseNodeBudget: the node's agent budget (the workload domain) was
	// full; with the OOM hold armed the kill came after the hold waited
	// with nothing progressing and released it.
	CauseNodeBudget Cause = "node-budget"
	// CauseHost: neither limit was reached: the host itself ran out of
	// memory (its global OOM killer), outside tenon's budget.
	CauseHost Cause = "host"
)

// Counters are the OOM-related counters of a cgroup at one reading.
type Counters struct {
	Kills     int64 // tasks OOM-killed in the group (cgroup.MemoryStats.OOMKills)
	LimitHits int64 // times the group's own limit was reached (cgroup.MemoryStats.LimitHits)
}

// HitWindow is how far back a limit hit may lie to explain an OOM kill:
// the kernel counts the hit when an allocation first fails, and the kill
// comes after reclaim gave up or, at the budget, after the OOM hold
// waited (up to policy.HoldMaxWait).
const HitWindow = time.Minute

// ClassifyOOM tells why a container's task was OOM-killed at now from when
// its own limit (ctrHit) and the domain's (domHit) were last reached (zero:
// never): the limit reached last within HitWindow was the one the kill
// freed memory for (a kill at the domain's limit is not a hit of the
// container's own); with neither, the kill came from outside both.
func ClassifyOOM(now, ctrHit, domHit time.Time) Cause {
	recent := func(t time.Time) bool { return !t.IsZero() && now.Sub(t) <= HitWindow }
	switch {
	case recent(ctrHit) && (!recent(domHit) || !ctrHit.Before(domHit)):
		return CauseContainerLimit
	case recent(domHit):
		return CauseNodeBudget
	}
	return CauseHost
}

// Reason is a cause in words, for logs and pod events; released says the
// OOM hold had just been released to the OOM killer.
func (c Cause) Reason(released bool) string {
	switch c {
	case CauseContainerLimit:
		return "OOM-killed at its own memory limit (limits.memory): raise the limit or lower its use"
	case CauseNodeBudget:
		if released {
			return "OOM-killed at the node's agent budget after the OOM hold waited with nothing progressing and released it"
		}
		return "OOM-killed at the node's agent budget"
	}
	return "OOM-killed by the host's OOM killer, outside tenon's budget: the node is out of memory"
}
