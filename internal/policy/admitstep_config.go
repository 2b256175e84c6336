package policy

import "github.com/tenon-dev/tenon/internal/gate"

// This file exports the tenon policies' configuration defaults, so that the
// simulator (internal/sim) composes tenon with the live values instead of
// copies (GateConfigFor, AgentReserve and ApplyTenonParams are exported
// where they are defined).

// AdmissionMargin is admission's physical safety margin in bytes: margin
// when it is > 0, else the default for budget and the gate configuration gc
// (zero fields take the defaults of GateConfigFor); 0 without a budget.
//
// The default keeps admitted work out of the gate's restricted regions.
// The gate is green only while the projected free memory (available less
// the growth it projects) is above its yellow line, (RedFraction +
// YellowFraction) × budget; below it, it lets at most bmax growers run
// (yellow) or one (red), whatever admission let in. Admission's physical
// check holds available ≥ margin + predicted remaining growth, so with a
// margin at the yellow line admitted work fills memory to exactly the line
// and the gate serializes it. The margin is therefore the yellow line plus
// one red region, the depth seed 000 (§5.6) sizes to absorb allocation
// overshoots between observation and enforcement, here the growth the
// gate projects and prediction error; and at least the gate's S. With
// Table 5's regions that is 37.5 % of the budget.
func AdmissionMargin(margin, budget int64, gc gate.Config) int64 {
	if margin > 0 || budget <= 0 {
		return max(margin, 0)
	}
	gc = GateConfigFor(gc, budget)
	th := gc.ThresholdsFor(budget)
	return max(gc.SafetyMargin, th.Yellow+th.Red)
}

// Variant is what one tenon policy name switches on.
type Variant struct {
	Name, Help string
	Gate       bool
	Admission  bool
	Residency  bool   // idle sandboxes may be torn down (given a state dir)
	Predictor  string // PredCurrent, PredStatic or PredHistory when Admission is on
}

// residency reports whether variant v tears idle sandboxes down: every
// tenon variant but the single-mechanism ones and the always-resident
// ablation.
func (v variant) residency() bool {
	return v.name != "gate" && v.name != "admission" && !v.alwaysResident
}

// TenonVariant returns the registered tenon policy called name (lower
// case): tenon and its ablations (seed 000 Table 4).
func TenonVariant(name string) (Variant, bool) {
	for _, v := range variants {
		if v.name == name {
			return Variant{Name: v.name, Help: v.help, Gate: v.gate, Admission: v.admission,
				Residency: v.residency(), Predictor: v.predictor}, true
		}
	}
	return Variant{}, false
}

// TenonVariantNames lists the tenon policy names in registration order.
func TenonVariantNames() []string {
	out := make([]string, len(variants))
	for i, v := range variants {
		out[i] = v.name
	}
	return out
}
