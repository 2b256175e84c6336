package policy

import "time"

// Agent slots: how many more agents a node can take, the number a node
// agent publishes for a cluster scheduler (the extended resource
// tenon.dev/agent-slots) and the simulated cluster places by
// (internal/sim, cluster.go). It is agent pacing's own rule
// (AgentMayStart with floors, Machine.pace) counted forward: the agents
// already waiting at the node start first, then each new agent fits when
// pacing's headroom, less the floors of the agents counted before it,
// holds its predicted first peak, its predicted floor and the agent
// reserve. So an agent placed on a slot starts under the node's pacing,
// memory-wise; the momentary part of pacing (PacingOpen: green and no
// action waiting for admission) is left to the node, which holds a placed
// agent until it opens. Counting it too (no slot while an action waits)
// would lose capacity to the publication's staleness: a node that opens
// right after a publication would get no agent until the next one, while
// agents placed on it start the moment its pacing opens.
//
// What residency could reclaim adds no slot: pacing's headroom charges a
// paged-out or torn-down sandbox its whole floor (OwedFloor), since it
// takes it back before its next action, and an idle resident sandbox's
// floor is in use either way. A slot count that added reclaimable memory
// would publish agents the node's own pacing then refuses: they would
// wait at that node instead of at the cluster, where another node may
// take them first.
//
// One charge goes beyond pacing's: every started agent between actions
// owes at least the predicted floor (owedFloors with the predicted floor),
// the part its sandbox does not hold yet included. An agent started
// moments ago holds next to nothing (no sandbox yet, or one small action
// in) and grows to a floor like the others' before long. Pacing can leave
// that to its next pass, since it reads the headroom again each time and
// closes once pressure or a waiting action says memory is short; a slot
// count is a promise the scheduler takes up in full until the next
// publication, and counted from fresh sandboxes that hold next to nothing
// yet it promised a 2 GiB node of a simulated burst 173 more agents (261
// at once on it, 48 OOM kills; bench/results/cluster-sim.md before cd46c62).

// SlotsInput is what AgentSlots counts from, observed at one instant.
type SlotsInput struct {
	// Headroom is pacing's headroom: PhysicalHeadroom less the floors that
	// reclaimed sandboxes take back (OwedFloor); Machine.AgentSlots also
	// charges every started agent at least the predicted floor.
	Headroom int64
	// Need is a new agent's predicted first-action peak; Floor the floor
	// its sandbox is predicted to keep (PredictFloor; 0 before the node
	// has measured one); Reserve the agent reserve (Config.AgentReserve).
	Need, Floor, Reserve int64
	// Active is the number of agents started under pacing; Queued the
	// agents waiting at the node to start (they take slots first).
	Active, Queued int
}

// MaxAgentSlots bounds AgentSlots (a node with a tiny predicted floor and a
// large budget would otherwise publish an absurd count).
const MaxAgentSlots = 1000

// slotCost is what AgentSlots charges each agent against the headroom: its
// predicted floor, or, before the node has measured one, the larger of its
// first peak and the agent reserve (a fresh sandbox keeps at most what its
// actions peaked at); 0 when none of them is known.
func slotCost(in SlotsInput) int64 {
	if in.Floor > 0 {
		return in.Floor
	}
	return max(in.Need, in.Reserve)
}

// AgentSlots is how many more agents the node can take now: the number of
// agents AgentMayStart admits one after another from in.Headroom, each
// taking its cost (slotCost) from it, less the in.Queued agents already
// waiting at the node; at most MaxAgentSlots, at least 0. A node that
// knows no cost yet (no floor, first peak or reserve) takes one agent at a
// time: one when it runs none.
func AgentSlots(in SlotsInput) int {
	cost, need := slotCost(in), in.Need+slotCost(in)
	headroom, active := in.Headroom, in.Active
	n := 0
	if active == 0 {
		// Pacing starts an agent on an empty node whatever the headroom.
		n, active, headroom = 1, 1, headroom-cost
	}
	if cost <= 0 {
		return max(n-in.Queued, 0)
	}
	if left := headroom - need - in.Reserve; left >= 0 {
		n += int(min(left/cost+1, MaxAgentSlots+int64(in.Queued)))
	}
	return min(max(n-in.Queued, 0), MaxAgentSlots)
}

// AgentSlots is AgentSlots over the machine's state at now: pacing's
// headroom read from obs, each started agent between actions charged at
// least the predicted floor (see above), the median first-action peak
// and floor of the agents it started (predictFloor), the agent reserve
// and the agents waiting to start. ok is false for a policy without agent pacing (no
// admission): it has no headroom rule to publish.
func (m *Machine) AgentSlots(now time.Time, obs Observer) (slots int, ok bool) {
	m.now = now
	if m.adm == nil {
		return 0, false
	}
	floor := m.predictFloor()
	return AgentSlots(SlotsInput{Headroom: m.paceHeadroom(obs, floor), Need: PredictFloor(m.firstPeaks, nil),
		Floor: floor, Reserve: m.cfg.AgentReserve, Active: m.active, Queued: len(m.queue)}), true
}
