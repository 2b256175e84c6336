package policy

import (
	"fmt"
	"strconv"

	"github.com/tenon-dev/tenon/internal/gate"
)

// gateParams applies the gate's command-line parameters:
// yellow=FRACTION and red=FRACTION (of the budget).
func gateParams(c *gate.Config, params map[string]string) error {
	for k, v := range params {
		switch k {
		case "yellow", "red":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f >= 0.5 {
				return fmt.Errorf("%w: %s=%q: want a fraction of the budget in (0, 0.5)", ErrBadOption, k, v)
			}
			if k == "yellow" {
				c.YellowFraction = f
			} else {
				c.RedFraction = f
			}
		default:
			return fmt.Errorf("%w: unknown parameter %q (the gate takes yellow=, red=)", ErrBadOption, k)
		}
	}
	return nil
}
