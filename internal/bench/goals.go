package bench

import (
	"fmt"

	"github.com/tenon-dev/tenon/internal/report"
)

// Targets of seed 000 §5 (issue 7's goals) at the headline case.
const (
	TargetOversubscription   = 8.6 // the headline case must be at least this oversubscribed
	TargetSuccessPct         = 100.0
	TargetOOM                = 0
	TargetSpeedupEager       = 5.5
	TargetSpeedupStatic      = 2.0
	TargetSpeedupReservation = 5.0
	TargetOverLowerBound     = 1.5
)

// Goal is one goal and what was measured for it.
type Goal struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	// Measured renders the value; "not measured" when Known is false, the
	// did-not-finish text when DidNotFinish is set.
	Measured string  `json:"measured"`
	Value    float64 `json:"value"`
	Known    bool    `json:"known"`
	Met      bool    `json:"met"`
	// DidNotFinish is set when the goal compares makespans and a run it
	// compares left workflows unfinished ("eager did not finish 8 of 20"):
	// there is no ratio then (report.Speedup).
	DidNotFinish string `json:"did_not_finish,omitempty"`
	// Min and Max are the goal's smallest and largest value over the
	// repetitions where it was measured, Reps how many those were; the
	// goal is judged on Value, the value of the median metrics.
	Min  float64 `json:"min,omitempty"`
	Max  float64 `json:"max,omitempty"`
	Reps int     `json:"reps,omitempty"`

	format func(float64) string // renders Value, Min and Max
}

// Status is "met", "not met", "did not finish" or "not measured".
func (g Goal) Status() string {
	switch {
	case g.DidNotFinish != "":
		return "did not finish"
	case !g.Known:
		return "not measured"
	case g.Met:
		return "met"
	}
	return "not met"
}

// NotJudged says why a run judged no goal (Judged is false).
const NotJudged = "No goal of seed 000 is judged in this run: the goals come from the headline case and the static sweep, and it ran neither (`--only` chose other groups)."

// Judged reports whether any of goals was measured: a run without the
// headline case and the static sweep (--only traces, say) measures none.
func Judged(goals []Goal) bool {
	for _, g := range goals {
		if g.Known || g.DidNotFinish != "" {
			return true
		}
	}
	return false
}

// Goals computes the goals from the headline case (tenon against Eager and
// agent-level reservation there) and the static sweep (the best Static-N
// that completed every workflow), on the cases' median metrics; with
// several repetitions, each goal also gets its min–max over them (the goal
// computed from each repetition alone).
func Goals(r *Results) []Goal {
	staticName, complete, _ := SelectBestStatic(r.Outcomes)
	if !complete {
		staticName = "" // the goal compares with a static that reached 100%
	}
	goals := goalsOf(r, staticName)
	n := 0
	for _, o := range r.Outcomes {
		n = max(n, len(o.Reps))
	}
	if n <= 1 {
		return goals
	}
	for k := range n {
		for i, g := range goalsOf(r.rep(k), staticName) {
			if !g.Known {
				continue
			}
			if goals[i].Reps == 0 {
				goals[i].Min, goals[i].Max = g.Value, g.Value
			}
			goals[i].Min, goals[i].Max = min(goals[i].Min, g.Value), max(goals[i].Max, g.Value)
			goals[i].Reps++
		}
	}
	for i := range goals {
		if g := &goals[i]; g.Reps > 0 && g.format != nil {
			g.Measured += fmt.Sprintf("; over %d reps: min %s, max %s", g.Reps, g.format(g.Min), g.format(g.Max))
		}
	}
	return goals
}

// rep is r with each case's repetition k as its comparison: a case run
// once stands in every repetition, and a case with fewer (one failed) has
// none.
func (r *Results) rep(k int) *Results {
	out := *r
	out.Outcomes = make([]Outcome, len(r.Outcomes))
	for i, o := range r.Outcomes {
		switch {
		case len(o.Reps) <= 1:
		case k < len(o.Reps):
			o.Comparison = o.Reps[k]
		default:
			o.Comparison = nil
		}
		out.Outcomes[i] = o
	}
	return &out
}

// goalsOf computes the goals from r's comparisons against staticName.
func goalsOf(r *Results, staticName string) []Goal {
	times := func(v float64) string { return fmt.Sprintf("%.2fx", v) }
	unknown := func(name, target string, format func(float64) string) Goal {
		return Goal{Name: name, Target: target, Measured: "not measured", format: format}
	}
	var head *report.Comparison
	if h := r.Headline(); h != nil {
		head = h.Comparison
	}
	tenon, hasTenon := head.Policy("tenon")
	speedupOf := func(name string, target float64, base report.Metrics, baseOK bool) Goal {
		g := unknown(name, fmt.Sprintf(">= %.1fx", target), times)
		if !hasTenon || !baseOK {
			return g
		}
		v, dnf := report.Speedup(tenon, base)
		switch {
		case dnf != "":
			g.DidNotFinish, g.Measured = dnf, dnf
		case v > 0:
			g.Value, g.Known, g.Met = v, true, v >= target
			g.Measured = fmt.Sprintf("%.2fx (%s %s / tenon %s)", v, base.Policy, base.MakespanS, tenon.MakespanS)
		}
		return g
	}
	over := unknown("headline oversubscription", fmt.Sprintf(">= %.1fx", TargetOversubscription), nil) // the same every rep
	success := unknown("tenon completes every workflow", fmt.Sprintf("%.0f%%", TargetSuccessPct), func(v float64) string { return fmt.Sprintf("%.1f%%", v) })
	oom := unknown("tenon OOM events", fmt.Sprintf("%d", TargetOOM), count)
	lb := unknown("tenon makespan / lower bound", fmt.Sprintf("<= %.1fx", TargetOverLowerBound), times)
	if head != nil {
		over.Value, over.Known = head.Oversubscription, true
		over.Met = head.Oversubscription >= TargetOversubscription
		over.Measured = fmt.Sprintf("%.2fx (%s)", head.Oversubscription, r.Headline().Case.Name)
	}
	if hasTenon {
		pct := 0.0
		if feasible := tenon.Workflows - tenon.Infeasible; feasible > 0 {
			pct = 100 * float64(tenon.Completed) / float64(feasible)
		}
		success.Value, success.Known, success.Met = pct, true, pct >= TargetSuccessPct
		success.Measured = fmt.Sprintf("%.1f%% (%s)", pct, report.Done(tenon))
		oom.Value, oom.Known, oom.Met = float64(tenon.OOMEvents), true, tenon.OOMEvents <= TargetOOM
		oom.Measured = fmt.Sprintf("%d", tenon.OOMEvents)
		switch v := tenon.OverLowerBound; {
		case tenon.Unfinished > 0:
			lb.DidNotFinish, lb.Measured = tenon.DidNotFinish(), tenon.DidNotFinish()
		case v > 0:
			lb.Value, lb.Known, lb.Met = v, true, v <= TargetOverLowerBound
			lb.Measured = fmt.Sprintf("%.2fx", v)
		}
	}
	eager, eagerOK := head.Policy("eager")
	res, resOK := head.Policy("agent-reservation")
	var static report.Metrics
	var staticOK bool
	if staticName != "" {
		for _, o := range r.Outcomes {
			if m, ok := o.Comparison.Policy(staticName); ok && o.Case.Group == GroupStatic {
				static, staticOK = m, true
			}
		}
	}
	return []Goal{over, success, oom,
		speedupOf("speedup over Eager", TargetSpeedupEager, eager, eagerOK),
		speedupOf("speedup over the best Static-N reaching 100%", TargetSpeedupStatic, static, staticOK),
		speedupOf("speedup over agent-level reservation", TargetSpeedupReservation, res, resOK),
		lb}
}
