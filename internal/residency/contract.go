package residency

import (
	"fmt"
	"strings"
)

// ProcInfo is a live process of a sandbox.
type ProcInfo struct {
	PID  int
	Comm string
}

// Observation is what is known at an action-done boundary.
type Observation struct {
	ActionExited   bool       // the action's process tree has terminated
	ResultRecorded bool       // its outcome is recorded by the controller
	Procs          []ProcInfo // live processes, the sandbox init excluded
	// Pinned, when non-empty, says the workflow keeps state only in live
	// processes (a persistent shell, a server it needs later); the reason.
	Pinned string
}

// Boundary labels (seed 000 §3.3).
const (
	LabelRestartable  = "restartable"
	LabelResidentOnly = "resident_only"
)

// Verdict is the restart-safe decision for one boundary.
type Verdict struct {
	Restartable bool
	Reason      string // why resident_only; empty when restartable
}

// Label returns "restartable" or "resident_only".
func (v Verdict) Label() string {
	if v.Restartable {
		return LabelRestartable
	}
	return LabelResidentOnly
}

// maxListedProcs bounds the processes named in a reason.
const maxListedProcs = 3

// Check applies the restart-safe contract (Appendix D.1) deterministically.
func Check(o Observation) Verdict {
	switch {
	case !o.ActionExited:
		return Verdict{Reason: "action still running"}
	case !o.ResultRecorded:
		return Verdict{Reason: "action result not recorded"}
	case o.Pinned != "":
		return Verdict{Reason: "pinned: " + o.Pinned}
	case len(o.Procs) > 0:
		var parts []string
		for i, p := range o.Procs {
			if i == maxListedProcs {
				parts = append(parts, fmt.Sprintf("and %d more", len(o.Procs)-maxListedProcs))
				break
			}
			parts = append(parts, fmt.Sprintf("%d (%s)", p.PID, p.Comm))
		}
		noun := "process"
		if len(o.Procs) > 1 {
			noun = "processes"
		}
		return Verdict{Reason: fmt.Sprintf("background %s %s still running", noun, strings.Join(parts, ", "))}
	}
	return Verdict{Restartable: true}
}
