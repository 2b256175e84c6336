package sim

import (
	"fmt"
	"strconv"

	"github.com/tenon-dev/tenon/internal/units"
)

// ApplyParams sets the policy parameters the live tenon policies take
// (internal/policy tenonParams and gateParams, the --param flag of tenon
// replay): the gate's yellow= and red= (fractions of the budget in
// (0, 0.5)), and admission's window= and beta= (sizes; beta per second) and
// margin= (its physical safety margin); and, in the simulator only, the
// gate's bmax= (growers permitted in yellow).
func (c *Config) ApplyParams(params map[string]string) error {
	for k, v := range params {
		switch k {
		case "window", "beta", "margin":
			n, err := units.ParseSize(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%w: %s=%q: want a positive size such as 2GiB", ErrBadConfig, k, v)
			}
			switch k {
			case "window":
				c.Admission.MWindow = n
			case "beta":
				c.Admission.Beta = float64(n)
			default:
				c.Margin = n
			}
		case "yellow", "red":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f >= 0.5 {
				return fmt.Errorf("%w: %s=%q: want a fraction of the budget in (0, 0.5)", ErrBadConfig, k, v)
			}
			if k == "yellow" {
				c.Gate.YellowFraction = f
			} else {
				c.Gate.RedFraction = f
			}
		case "bmax":
			// Not a live parameter (policy.gateParams does not take it): a
			// what-if for hosts where Table 5's bmax = 4 growers in yellow
			// serializes thousands of concurrent actions.
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("%w: bmax=%q: want a count >= 1", ErrBadConfig, v)
			}
			c.Gate.BMax = n
		default:
			return fmt.Errorf("%w: unknown parameter %q (tenon policies take yellow=, red=, window=, beta=, margin=; the simulator also bmax=)", ErrBadConfig, k)
		}
	}
	return nil
}
