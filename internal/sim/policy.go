package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tenon-dev/tenon/internal/policy"
)

// Predictor kinds a policy may use (the live registry's).
const (
	PredCurrent = policy.PredCurrent // forest over all causal features (predict.FeatureSetCurrent)
	PredStatic  = policy.PredStatic  // forest over class, hints and command only
	PredHistory = policy.PredHistory // the preceding action's demand (predict.HistoryOnly)
)

// Spec is what one policy name switches on.
type Spec struct {
	Name        string
	StaticN     int    // > 0: at most N attempts at once (static-N)
	Reservation bool   // each attempt reserves its lifetime peak (agent-reservation)
	Gate        bool   // runtime execution gate (gate.Controller)
	Admission   bool   // water-level action admission (admission.Admitter)
	Residency   bool   // idle sandboxes may be torn down between actions
	Predictor   string // PredCurrent, PredStatic or PredHistory when Admission is on
}

// PolicyNames lists the names ParsePolicy accepts ("static-N" for the family).
func PolicyNames() []string {
	return append([]string{"eager", "static-N", "agent-reservation"}, policy.TenonVariantNames()...)
}

// ParsePolicy maps a policy name, as the live registry spells it, to a Spec.
// The tenon policies (tenon, gate, admission and the ablations) switch on
// what the live registry's variant does (policy.TenonVariant).
func ParsePolicy(name string) (Spec, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if v, ok := policy.TenonVariant(n); ok {
		return Spec{Name: n, Gate: v.Gate, Admission: v.Admission, Residency: v.Residency, Predictor: v.Predictor}, nil
	}
	switch n {
	case "eager":
		return Spec{Name: n}, nil
	case "agent-reservation":
		return Spec{Name: n, Reservation: true}, nil
	}
	if arg, ok := strings.CutPrefix(n, "static-"); ok {
		k, err := strconv.Atoi(arg)
		if err != nil || k < 1 {
			return Spec{}, fmt.Errorf("%w %q: static-N wants a number >= 1 after static-", ErrUnknownPolicy, name)
		}
		return Spec{Name: n, StaticN: k}, nil
	}
	return Spec{}, fmt.Errorf("%w %q: valid names are %s", ErrUnknownPolicy, name, strings.Join(PolicyNames(), ", "))
}
