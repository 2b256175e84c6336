package policy

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/units"
)

// ApplyTenonParams applies the parameters of the tenon policies: the gate's
// yellow=, red=, hold= (a duration, or off) and hold-max= (the longest a
// hold may last while other sandboxes progress, HoldMaxWait), held-budget=
// (on, the default, or off: the gate's held budget while the hold runs,
// Config.HeldBudget), task-reserve= (on, the default, or off: TaskReserve,
// Config.NoTaskReserve), rollback= (on, the default, or off: the hold's
// rollback, Config.NoRollback), cpu-pacing= (the share of the host's CPUs the
// sandboxes may use before agent pacing waits, DefaultCPUBusy, or off;
// cpupace.go), and admission's window=
// (bytes or a size such as 2GiB), beta= (bytes per second), margin= and
// light-margin= (a size, or off: light actions keep out of the margin).
func ApplyTenonParams(c *Config, hold *time.Duration, params map[string]string) error {
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
		case "light-margin":
			if v == "off" {
				c.LightMargin = -1
				continue
			}
			n, err := units.ParseSize(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%w: light-margin=%q: want a positive size such as 64MiB, or off", ErrBadOption, v)
			}
			c.LightMargin = n
		case "hold":
			if v == "off" {
				*hold = -1
				continue
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%w: hold=%q: want a positive duration such as 3s, or off", ErrBadOption, v)
			}
			*hold = d
		case "task-reserve":
			on, err := onOff(k, v)
			if err != nil {
				return err
			}
			c.NoTaskReserve = !on
		case "rollback":
			on, err := onOff(k, v)
			if err != nil {
				return err
			}
			c.NoRollback = !on
		case "held-budget":
			on, err := onOff(k, v)
			if err != nil {
				return err
			}
			c.HeldBudget = on
		case "cpu-pacing":
			if v == "off" {
				c.CPUBusy = 0
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0 && f <= 1) {
				return fmt.Errorf("%w: cpu-pacing=%q: want a share of the CPUs in (0, 1] such as 0.8, or off", ErrBadOption, v)
			}
			c.CPUBusy = f
		case "hold-max":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%w: hold-max=%q: want a positive duration such as 5m", ErrBadOption, v)
			}
			c.HoldMaxWait = d
		default:
			gp[k] = v
		}
	}
	if err := gateParams(&c.GateConfig, gp); err != nil {
		return fmt.Errorf("%w (tenon policies also take hold=, hold-max=, held-budget=, task-reserve=, rollback=, cpu-pacing=, window=, beta=, margin=, light-margin=)", err)
	}
	return nil
}

// onOff parses the value v of switch parameter k: on or off.
func onOff(k, v string) (bool, error) {
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s=%q: want on or off", ErrBadOption, k, v)
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
