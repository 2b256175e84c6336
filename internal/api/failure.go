package api

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/units"
)

// Failure kinds of ExecResponse.Failure.
const (
	FailureOOM     = "oom"     // the action was OOM-killed
	FailureTimeout = "timeout" // the action ran past its timeout and was killed
	FailureDisk    = "disk"    // the sandbox's or the workspace's disk limit is full
)

// maxOthers bounds the other sandboxes an OOM message names.
const maxOthers = 5

// failureReport is what explainFailure needs besides the response.
type failureReport struct {
	Timeout time.Duration // the action's timeout
	Budget  int64         // the workload domain's budget, 0 when unknown
	Others  []OtherSandbox
	// Disk names what is full ("the workspace", "the sandbox's files
	// outside the workspace") and DiskMax its limit, with DiskFull.
	Disk    string
	DiskMax int64
}

// explainFailure fills resp.Failure and resp.Message for an OOM-killed or
// timed-out action, in words a harness can show its model: what happened,
// the action's peak, the budget and what else held memory, what survived
// and what to try. Other responses are left as they are.
func explainFailure(resp *ExecResponse, r failureReport) {
	var b strings.Builder
	switch {
	case resp.OOM:
		resp.Failure = FailureOOM
		fmt.Fprintf(&b, "out of memory: the command was killed by the kernel's OOM killer at a peak of %s", units.FormatSize(resp.PeakBytes))
		if r.Budget > 0 {
			fmt.Fprintf(&b, "; all sandboxes on this host share a memory budget of %s", units.FormatSize(r.Budget))
		}
		b.WriteString(othersText(r.Others))
		b.WriteString(". The sandbox was replaced: files under the workspace are kept, running processes and files elsewhere (/tmp) are gone." +
			" Retry with less memory (fewer test workers, a smaller test selection, no parallel build) or split the command.")
	case resp.TimedOut:
		resp.Failure = FailureTimeout
		fmt.Fprintf(&b, "timed out: the command ran longer than its timeout of %s and was killed with every process it started (peak memory %s)",
			r.Timeout.Round(time.Millisecond), units.FormatSize(resp.PeakBytes))
		b.WriteString(". The sandbox and its files are kept. Retry with a longer timeout, run less at once, or start long-running servers in the background (&).")
	case resp.DiskFull:
		resp.Failure = FailureDisk
		fmt.Fprintf(&b, "disk full: %s reached its limit", r.Disk)
		if r.DiskMax > 0 {
			fmt.Fprintf(&b, " of %s", units.FormatSize(r.DiskMax))
		}
		b.WriteString("; writes fail with \"No space left on device\". Delete files you no longer need (build outputs, caches, downloads) and retry.")
		resp.Message = b.String()
		return
	default:
		return
	}
	resp.BudgetBytes, resp.Others = r.Budget, r.Others
	resp.Message = b.String()
}

// othersText lists the other sandboxes holding memory, largest first.
func othersText(others []OtherSandbox) string {
	if len(others) == 0 {
		return "; no other sandbox was live"
	}
	var total int64
	for _, o := range others {
		total += o.MemBytes
	}
	parts := make([]string, 0, min(len(others), maxOthers))
	for i, o := range others {
		if i == maxOthers {
			parts = append(parts, fmt.Sprintf("%d more", len(others)-maxOthers))
			break
		}
		state := "idle"
		if o.Running {
			state = "running a command"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", o.Agent, units.FormatSize(o.MemBytes), state))
	}
	return fmt.Sprintf("; %d other sandboxes held %s: %s", len(others), units.FormatSize(total), strings.Join(parts, ", "))
}

// others lists the live sandboxes other than sandbox with their memory,
// largest first.
func (s *Server) others(ctx context.Context, sandbox string) []OtherSandbox {
	var out []OtherSandbox
	for _, l := range s.live.List() {
		if l.Info.ID == sandbox {
			continue
		}
		o := OtherSandbox{Sandbox: l.Info.ID, Running: l.Running}
		if l.Agent != nil {
			o.Agent = l.Agent.ID
		}
		if st, err := s.cfg.Backend.Stats(ctx, l.Info.ID); err == nil {
			o.MemBytes = st.Memory
		}
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MemBytes > out[j].MemBytes })
	return out
}
