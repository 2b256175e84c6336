package sim

import (
	"errors"
	"fmt"

	"github.com/tenon-dev/tenon/internal/policy"
)

// Predictor kinds a policy may use (the live registry's).
const (
	PredCurrent = policy.PredCurrent // forest over all causal features (predict.FeatureSetCurrent)
	PredStatic  = policy.PredStatic  // forest over class, hints and command only
	PredHistory = policy.PredHistory // the preceding action's demand (predict.HistoryOnly)
)

// Spec is what one policy name switches on (the live registry's).
type Spec = policy.Spec

// PolicyNames lists the names ParsePolicy accepts: the live registry's.
func PolicyNames() []string { return policy.Names() }

// ParsePolicy maps a policy name to its Spec through the live registry
// (policy.ParseSpec).
func ParsePolicy(name string) (Spec, error) {
	sp, err := policy.ParseSpec(name)
	if errors.Is(err, policy.ErrUnknown) {
		return Spec{}, fmt.Errorf("%w: %w", ErrUnknownPolicy, err)
	}
	return sp, err
}
