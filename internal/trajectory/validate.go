package trajectory

import (
	"fmt"
	"math"
)

// Validate checks one workflow against the rules in docs/trajectory.md and
// returns the first violation as a *FieldError (or *VersionError). It does not
// check that IDs are unique across a file; Load and Write do.
func (w Workflow) Validate() error {
	if w.Version != Version {
		return &VersionError{Got: w.Version}
	}
	if w.ID == "" {
		return fieldErr("id", "must not be empty")
	}
	if err := nonNeg("arrival_s", w.Arrival); err != nil {
		return err
	}
	if len(w.Actions) == 0 {
		return fieldErr("actions", "must hold at least one action")
	}
	for i, a := range w.Actions {
		if err := a.validate(fmt.Sprintf("actions[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (a Action) validate(p string) error {
	if err := nonNeg(p+".wait_s", a.Wait); err != nil {
		return err
	}
	if a.Class == "" {
		return fieldErr(p+".class", "must not be empty")
	}
	switch {
	case a.Run == "" && a.Mem == nil:
		return fieldErr(p, `needs exactly one of "run" and "mem"; has neither`)
	case a.Run != "" && a.Mem != nil:
		return fieldErr(p, `needs exactly one of "run" and "mem"; has both`)
	}
	if m := a.Mem; m != nil {
		if err := positive(p+".mem.peak_mib", m.PeakMiB); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"ramp_s", m.RampS}, {"hold_s", m.HoldS}, {"retain_mib", m.RetainMiB}, {"retain_s", m.RetainS}, {"files_mib", m.FilesMiB}} {
			if err := nonNeg(p+".mem."+f.name, f.v); err != nil {
				return err
			}
		}
		if m.RetainMiB > m.PeakMiB {
			return fieldErr(p+".mem.retain_mib", fmt.Sprintf("must be <= peak_mib (%g)", m.PeakMiB))
		}
	}
	if r := a.Recorded; r != nil {
		for _, f := range []struct {
			name string
			v    float64
		}{{"duration_s", r.DurationS}, {"avg_mib", r.AvgMiB}, {"peak_mib", r.PeakMiB}} {
			if err := nonNeg(p+".recorded."+f.name, f.v); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldErr(field, msg string) error { return &FieldError{Field: field, Msg: msg} }

func nonNeg(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fieldErr(field, "must be >= 0")
	}
	return nil
}

func positive(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return fieldErr(field, "must be > 0")
	}
	return nil
}
