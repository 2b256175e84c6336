package sim

import "time"

// The v2 domain (Config.V2). A pure cgroup v2 kernel has no
// oom_kill_disable: the live hold sets the domain's memory.high at the hold
// line (an eighth below memory.max) and the policy's freezing hold stops
// the allocators (policy.Machine.SetHoldFreeze). The simulator models the
// kernel's side so: while the hold is armed, an allocation past v2Over
// above the line waits there (the kernel throttles an allocator above
// memory.high to a crawl; the live VM suite saw none reach memory.max while
// the policy froze them), and such a waiter stalls on memory unless frozen
// (its memory.pressure advances: gate.Sample.MemStall). The domain is
// under OOM while usage is above the line and a waiter stalls; the freezing
// hold freezes the growers (the gate's decision carries its denials) and
// thaws them one a period once usage is back at or below the line
// (Observation.AboveHoldLine). A release sets memory.high to max: the
// waiters grow on until memory.max, where the OOM killer takes the largest
// sandbox, as without the hold.

// v2Over is how far above the line a throttled allocator gets before it
// waits: far enough that usage is above the line (UnderOOM, AboveHoldLine),
// a small part of the eighth up to memory.max.
const v2Over = 3 * holdSlack

// memStall advances the memory stall total of each v2 waiter that is not
// frozen by one gate period (dt) and returns sb's.
func (s *sim) memStall(sb *sandbox, dt time.Duration) time.Duration {
	if s.cfg.V2 && s.stuck(sb) {
		sb.stall += dt
	}
	return sb.stall
}
