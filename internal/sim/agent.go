package sim

import (
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

type agentPhase int

const (
	phQueued    agentPhase = iota // waiting for an agent slot (static-N, reservation)
	phWaiting                     // model wait
	phEnsuring                    // its sandbox is being created, rematerialized or torn down first
	phBlocked                     // rematerialization not allowed yet (pressure or slots)
	phAdmission                   // queued in admission
	phPagingIn                    // admitted; its paged-out sandbox faults back first
	phRunning                     // an action runs
	phFinishing                   // final destroy
	phDone
)

// agent is one workflow and its current attempt, as the simulated host
// runs it; what the policy knows of it is in the decision core.
type agent struct {
	wf    *trajectory.Workflow
	prof  []profile
	phase agentPhase
	gen   uint64 // changes when an attempt ends, cancelling its events

	attempt  int
	charged  int  // failed attempts charged to Config.Retries
	free     bool // the failing attempt was preempted by the OOM hold: not charged
	next     int  // index of the current or next action
	sb       *sandbox
	nSandbox int
	// predWait is the current model wait's predicted length
	// (sim.waits, learned from the agent's earlier waits only).
	predWait  time.Duration
	idleSince time.Duration // when the current model wait or admission wait began
	wantRemat bool          // the wait ended while the sandbox was being torn down
	// faulting: its sandbox's page-in is under way (an evPagedIn is
	// pending, which readies or starts the action when it is done).
	faulting bool

	before  int64         // sandbox memory when the running action started
	started time.Duration // when the running action started
	// limit, when > 0, is the memory.high limit on the running action
	// (AgentCgroup's Low actions).
	limit int64

	res WorkflowResult
}
