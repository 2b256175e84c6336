package agentcgroup

import (
	"math"
	"sort"
	"unicode/utf8"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// Conversion constants.
const (
	// MaxRampS caps the ramp of an imported action's profile: ramp_s =
	// min(duration/3, MaxRampS), hold_s = duration - ramp_s.
	MaxRampS = 2.0
	// MaxCommandBytes truncates very long command texts (heredocs).
	MaxCommandBytes = 1000
)

// Convert turns one run's samples (sorted, valid) and tool calls into a
// workflow. With S the samples and, for a call [start, end]:
//
//   - lo = the last sample at or before start (the first sample if none),
//     hi = the first sample at or after end (the last sample if none); the
//     call's window is S[lo..hi] — the samples inside the call widened to the
//     nearest sample on each side, so a call shorter than the sampling period
//     still sees the sample before and after it;
//   - before = S[lo], the level just before the call (recorded as
//     before_mib: what the sandbox held); after = S[hi];
//   - recorded peak = max(window) - before, avg = mean(window) - before,
//     both floored at 0; duration = end - start;
//   - wait = start - previous call's end (for the first call: start - first
//     sample), floored at 0;
//   - retained floor F: F_0 = 0, F_i = max(F_{i-1}, after_i - before_1);
//     retain_mib_i = F_i - F_{i-1}. That is, a call retains the amount by which
//     it raises the container's high-water resident floor above the level
//     before the first call; noise that goes up and down is not counted twice.
//   - mem profile: peak_mib = max(1, recorded peak, retained), ramp_s =
//     min(duration/3, MaxRampS), hold_s = duration - ramp_s;
//   - the retained amount stays for the rest of the workflow either way; how
//     depends on the evidence of a process outliving the call
//     (leavesProcess: Bash's run_in_background, or a command that
//     StartsBackground): with it, retain_mib with background = true (a
//     background process holds it: the sandbox is no longer restart-safe);
//     without it, files_mib (page cache and the agent harness, not a process
//     of the call: restart-safe, captured and restored with the sandbox's
//     writable layer). hints.background is the evidence.
//
// A call without an end (Call.EndInferred) gets one from inferEnd, and its
// after is the last sample before the next call starts (see inferEnd).
//
// Values are rounded to 0.1 MiB and 1 ms. Convert returns a workflow with
// no actions when there are no samples or calls.
func Convert(id, image string, samples []Sample, calls []Call) trajectory.Workflow {
	w := trajectory.Workflow{Version: trajectory.Version, ID: id, Image: image, Kind: "imported"}
	if len(samples) == 0 || len(calls) == 0 {
		return w
	}
	mib := func(i int) float64 { return float64(samples[i].Bytes) / float64(units.MiB) }
	base := -1.0
	var floor float64
	prevEnd := samples[0].Epoch
	for ci, c := range calls {
		start, end := epoch(c.Start), math.Max(epoch(c.End), epoch(c.Start))
		lo := sort.Search(len(samples), func(i int) bool { return samples[i].Epoch > start }) - 1
		lo = max(lo, 0)
		settled := -1 // the sample giving the level after the call; -1: hi
		if c.EndInferred {
			until := nextStart(samples, calls, ci)
			end = inferEnd(samples, lo, start, until)
			settled = sort.Search(len(samples), func(i int) bool { return samples[i].Epoch > until }) - 1
		}
		hi := sort.Search(len(samples), func(i int) bool { return samples[i].Epoch >= end })
		hi = max(min(hi, len(samples)-1), lo)
		before, after := mib(lo), mib(max(hi, settled))
		if base < 0 {
			base = before
		}
		peak, sum := 0.0, 0.0
		for i := lo; i <= hi; i++ {
			peak = max(peak, mib(i))
			sum += mib(i)
		}
		recPeak := math.Max(0, peak-before)
		recAvg := math.Max(0, sum/float64(hi-lo+1)-before)
		var retain float64
		if f := after - base; f > floor {
			retain, floor = f-floor, f
		}
		dur := end - start
		class, cmd := Classify(c.Tool, c.Input)
		ramp := r3(math.Min(dur/3, MaxRampS))
		m := &trajectory.MemProfile{
			PeakMiB: math.Max(1, r1(math.Max(recPeak, retain))),
			RampS:   ramp,
			HoldS:   math.Max(0, r3(r3(dur)-ramp)),
		}
		bg := leavesProcess(c)
		if kept := math.Min(r1(retain), m.PeakMiB); bg {
			m.RetainMiB, m.Background = kept, kept > 0
		} else {
			m.FilesMiB = kept
		}
		w.Actions = append(w.Actions, trajectory.Action{
			Wait:    r3(math.Max(0, start-prevEnd)),
			Class:   class,
			Command: truncate(cmd, MaxCommandBytes),
			Mem:     m,
			Hints:   trajectory.Hints{Background: bg},
			Recorded: &trajectory.Recorded{DurationS: r3(dur), AvgMiB: r1(recAvg), PeakMiB: r1(recPeak),
				BeforeMiB: r1(before)},
		})
		prevEnd = end
	}
	return w
}

// leavesProcess reports the trace's evidence that a process outlives the
// call: Bash's run_in_background, or a Bash command that StartsBackground.
// The traces record no process lists, so memory that stays is not evidence.
func leavesProcess(c Call) bool {
	if bg, _ := c.Input["run_in_background"].(bool); bg {
		return true
	}
	return c.Tool == "Bash" && StartsBackground(commandText(c.Tool, c.Input))
}

func r1(v float64) float64 { return math.Round(v*10) / 10 }
func r3(v float64) float64 { return math.Round(v*1000) / 1000 }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
