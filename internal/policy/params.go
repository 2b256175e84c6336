package policy

import (
	"fmt"
	"github.com/tenon-dev/tenon/internal/units"
	"strconv"

	"github.com/tenon-dev/tenon/internal/gate"
)

// tenonParams applies the parameters of the tenon policies: the gate's
// yellow= and red=, and admission's window= (bytes or a size such as 2GiB)
// and beta= (bytes per second).
func tenonParams(c *TenonConfig, params map[string]string) error {
	gp := map[string]string{}
	for k, v := range params {
		switch k {
		case "window", "beta", "margin":
			n, err := units.ParseSize(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%w: %s=%q: want a positive size such as 2GiB", ErrBadOption, k, v)
			}
			switch k {
			case "window":
				c.AdmissionConfig.MWindow = n
			case "beta":
				c.AdmissionConfig.Beta = float64(n)
			case "margin":
				c.Margin = n
			}
		default:
			gp[k] = v
		}
	}
	if err := gateParams(&c.GateConfig, gp); err != nil {
		return fmt.Errorf("%w (tenon policies also take window=, beta=, margin=)", err)
	}
	return nil
}

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
