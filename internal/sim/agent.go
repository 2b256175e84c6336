package sim

import (
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

type agentPhase int

const (
	phQueued    agentPhase = iota // waiting for an agent slot (static-N, reservation)
	phWaiting                     // model wait
	phEnsuring                    // its sandbox is being created, rematerialized or torn down first
	phBlocked                     // rematerialization not allowed yet (pressure or slots)
	phAdmission                   // queued in admission
	phRunning                     // an action runs
	phFinishing                   // final destroy
	phDone
)

// agent is one workflow and its current attempt.
type agent struct {
	wf    *trajectory.Workflow
	prof  []profile
	pred  predict.Predictor
	phase agentPhase
	gen   uint64 // changes when an attempt ends, cancelling its events

	attempt      int
	attemptStart time.Duration
	next         int // index of the current or next action
	sb           *sandbox
	nSandbox     int
	hist         []predict.Completed
	waitSum      time.Duration
	waitN        int
	wantRemat    bool // the wait ended while the sandbox was being torn down

	ticket  *admission.Ticket
	enq     time.Duration // when the ticket was enqueued
	seq     uint64        // enqueue order, breaks ties of enq
	peak    int64         // the ticket's predicted peak (after what retries learned)
	before  int64         // sandbox memory when the action was admitted
	charge  int64         // its admission charge
	started time.Duration // when the running action started
	admIdx  int           // index in sim.admitted, -1 when not admitted
	reserve int64         // agent-reservation bytes
	slot    bool          // holds a static-N slot or a reservation
	paced   bool          // passed agent pacing; counted in sim.active
	// firstPeak is the predicted peak of the workflow's first action with
	// no history (the pacing check), -1 until computed.
	firstPeak int64

	res WorkflowResult
}
