package policy

import "github.com/tenon-dev/tenon/internal/gate"

// AdmissionMargin is admission's physical safety margin in bytes: margin
// when it is > 0, else the default for budget and the gate configuration gc
// (zero fields take the defaults of GateConfigFor); 0 without a budget.
//
// The default is one red region of the gate, RedFraction × budget, the
// depth seed 000 (§5.6) sizes to absorb allocation overshoots between
// observation and enforcement, and at least the gate's S: 12.5 % of the
// budget with Table 5's regions. Admission's physical check holds available
// ≥ margin + predicted remaining growth, so admitted work may fill memory
// into the gate's yellow region, where the gate lets at most b growers run,
// the one that has grown furthest first (internal/gate, seniority).
//
// Until the gate's seniority rule the default was the yellow line plus a red
// region (37.5 %): the gate then froze growers half-grown in the yellow
// region until none could finish, and admitted work had to stay out of it.
// With seniority, tenon at the smaller margin simulated the bundled workload
// in 112.0 s instead of 200.3 s, the bench's generated workloads 1.1–4.6×
// faster, and 10,000 agents at 1 TiB at 1.03× the lower bound, all with no
// OOM kill (bench/results/margin.md).
func AdmissionMargin(margin, budget int64, gc gate.Config) int64 {
	if margin > 0 || budget <= 0 {
		return max(margin, 0)
	}
	gc = GateConfigFor(gc, budget)
	return max(gc.SafetyMargin, gc.ThresholdsFor(budget).Red)
}
