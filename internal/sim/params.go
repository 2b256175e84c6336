package sim

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/tenon-dev/tenon/internal/policy"
)

// ApplyParams sets the policy parameters the live tenon policies take, with
// the live parser (policy.ApplyTenonParams, the --param flag of tenon
// replay): the gate's yellow= and red= (fractions of the budget in
// (0, 0.5)), and admission's window= and beta= (sizes; beta per second) and
// margin= (its physical safety margin) and light-margin= (the light
// lane's share of it, or off), the OOM hold's hold= (a duration,
// or off; Config.Hold), hold-max= (Config.HoldMaxWait) and held-budget=
// (on or off; Config.NoHeldBudget) and task-reserve= (on or off;
// Config.NoTaskReserve) and rollback= (on or off; Config.NoRollback); and, in the simulator only, the
// gate's bmax= (growers permitted in yellow). It refuses the live
// cpu-pacing= (the simulator models no CPU). Errors are ErrBadConfig.
func (c *Config) ApplyParams(params map[string]string) error {
	live := maps.Clone(params)
	if v, ok := live["bmax"]; ok {
		// Not a live parameter (the live gate does not take it): a what-if
		// for hosts where Table 5's bmax = 4 growers in yellow serializes
		// thousands of concurrent actions.
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: bmax=%q: want a count >= 1", ErrBadConfig, v)
		}
		c.Gate.BMax = n
		delete(live, "bmax")
	}
	if _, ok := live["cpu-pacing"]; ok {
		return fmt.Errorf("%w: cpu-pacing= is a live parameter: the simulator models no CPU, so CPU pacing is always off in it", ErrBadConfig)
	}
	pc := policy.Config{GateConfig: c.Gate, AdmissionConfig: c.Admission, Margin: c.Margin, LightMargin: c.LightMargin, HoldMaxWait: c.HoldMaxWait, HeldBudget: !c.NoHeldBudget, NoTaskReserve: c.NoTaskReserve, NoRollback: c.NoRollback}
	hold := c.Hold
	if err := policy.ApplyTenonParams(&pc, &hold, live); err != nil {
		return fmt.Errorf("%w: %w (the simulator also takes bmax=)", ErrBadConfig, err)
	}
	c.Gate, c.Admission, c.Margin, c.LightMargin, c.Hold, c.HoldMaxWait, c.NoHeldBudget, c.NoTaskReserve, c.NoRollback = pc.GateConfig, pc.AdmissionConfig, pc.Margin, pc.LightMargin, hold, pc.HoldMaxWait, !pc.HeldBudget, pc.NoTaskReserve, pc.NoRollback
	return nil
}
