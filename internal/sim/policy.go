package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// Predictor kinds a policy may use.
const (
	PredCurrent = "current" // forest over all causal features (predict.FeatureSetCurrent)
	PredStatic  = "static"  // forest over class, hints and command only
	PredHistory = "history" // the preceding action's demand (predict.HistoryOnly)
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
	return []string{"eager", "static-N", "agent-reservation", "gate", "admission", "tenon",
		"tenon-no-admission", "tenon-no-gate", "tenon-always-resident", "tenon-static-pred", "tenon-history-pred"}
}

// ParsePolicy maps a policy name, as the live registry spells it, to a Spec.
func ParsePolicy(name string) (Spec, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	tenon := Spec{Name: n, Gate: true, Admission: true, Residency: true, Predictor: PredCurrent}
	switch n {
	case "eager":
		return Spec{Name: n}, nil
	case "agent-reservation":
		return Spec{Name: n, Reservation: true}, nil
	case "gate":
		return Spec{Name: n, Gate: true}, nil
	case "admission":
		return Spec{Name: n, Admission: true, Predictor: PredCurrent}, nil
	case "tenon":
		return tenon, nil
	case "tenon-no-admission":
		tenon.Admission, tenon.Predictor = false, ""
		return tenon, nil
	case "tenon-no-gate":
		tenon.Gate = false
		return tenon, nil
	case "tenon-always-resident":
		tenon.Residency = false
		return tenon, nil
	case "tenon-static-pred":
		tenon.Predictor = PredStatic
		return tenon, nil
	case "tenon-history-pred":
		tenon.Predictor = PredHistory
		return tenon, nil
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
