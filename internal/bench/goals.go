package bench

import "fmt"

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
	// Measured renders the value; "not measured" when Known is false.
	Measured string  `json:"measured"`
	Value    float64 `json:"value"`
	Known    bool    `json:"known"`
	Met      bool    `json:"met"`
}

// Status is "met", "not met" or "not measured".
func (g Goal) Status() string {
	switch {
	case !g.Known:
		return "not measured"
	case g.Met:
		return "met"
	}
	return "not met"
}

// Goals computes the goals from the headline case (tenon against Eager and
// agent-level reservation there) and the static sweep (the best Static-N
// that completed every workflow).
func Goals(r *Results) []Goal {
	head := r.Headline()
	var (
		tenon     bool
		tenonS    float64
		unknown   = func(name, target string) Goal { return Goal{Name: name, Target: target, Measured: "not measured"} }
		speedupOf = func(name string, target, base float64, baseOK bool, baseName string) Goal {
			g := unknown(name, fmt.Sprintf(">= %.1fx", target))
			if !tenon || !baseOK || tenonS <= 0 || base <= 0 {
				return g
			}
			v := base / tenonS
			g.Value, g.Known, g.Met = v, true, v >= target
			g.Measured = fmt.Sprintf("%.2fx (%s %.1f s / tenon %.1f s)", v, baseName, base, tenonS)
			return g
		}
	)
	over := unknown("headline oversubscription", fmt.Sprintf(">= %.1fx", TargetOversubscription))
	success := unknown("tenon completes every workflow", fmt.Sprintf("%.0f%%", TargetSuccessPct))
	oom := unknown("tenon OOM events", fmt.Sprintf("%d", TargetOOM))
	var eagerS, resS, lbRatio float64
	var eagerOK, resOK bool
	if head != nil && head.Comparison != nil {
		c := head.Comparison
		over.Value, over.Known = c.Oversubscription, true
		over.Met = c.Oversubscription >= TargetOversubscription
		over.Measured = fmt.Sprintf("%.2fx (%s)", c.Oversubscription, head.Case.Name)
		if m, ok := metricsOf(c, "tenon"); ok {
			tenon = true
			tenonS = m.MakespanS
			pct := 0.0
			if m.Workflows > 0 {
				pct = 100 * float64(m.Completed) / float64(m.Workflows)
			}
			success.Value, success.Known, success.Met = pct, true, pct >= TargetSuccessPct
			success.Measured = fmt.Sprintf("%.1f%% (%d/%d)", pct, m.Completed, m.Workflows)
			oom.Value, oom.Known, oom.Met = float64(m.OOMEvents), true, m.OOMEvents <= TargetOOM
			oom.Measured = fmt.Sprintf("%d", m.OOMEvents)
			lbRatio = m.OverLowerBound
		}
		if m, ok := metricsOf(c, "eager"); ok {
			eagerS, eagerOK = m.MakespanS, true
		}
		if m, ok := metricsOf(c, "agent-reservation"); ok {
			resS, resOK = m.MakespanS, true
		}
	}
	goals := []Goal{over, success, oom,
		speedupOf("speedup over Eager", TargetSpeedupEager, eagerS, eagerOK, "eager")}
	staticName, complete, _ := SelectBestStatic(r.Outcomes)
	var staticS float64
	var staticOK bool
	if !complete {
		staticName = "" // the goal compares with a static that reached 100%
	}
	if staticName != "" {
		for _, o := range r.Outcomes {
			if m, ok := metricsOf(o.Comparison, staticName); ok && o.Case.Group == GroupStatic {
				staticS, staticOK = m.MakespanS, true
			}
		}
	}
	label := staticName
	if label == "" {
		label = "best static"
	}
	goals = append(goals,
		speedupOf("speedup over the best Static-N reaching 100%", TargetSpeedupStatic, staticS, staticOK, label),
		speedupOf("speedup over agent-level reservation", TargetSpeedupReservation, resS, resOK, "agent-reservation"))
	lb := unknown("tenon makespan / lower bound", fmt.Sprintf("<= %.1fx", TargetOverLowerBound))
	if tenon && lbRatio > 0 {
		lb.Value, lb.Known, lb.Met = lbRatio, true, lbRatio <= TargetOverLowerBound
		lb.Measured = fmt.Sprintf("%.2fx", lbRatio)
	}
	return append(goals, lb)
}
