package trajectory

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
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
	if err := w.validateSandbox(); err != nil {
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
	switch n := btoi(a.Run != "") + btoi(a.Mem != nil) + btoi(a.Edit != nil); {
	case n == 0:
		return fieldErr(p, `needs exactly one of "run", "mem" and "edit"; has none`)
	case n > 1:
		return fieldErr(p, `needs exactly one of "run", "mem" and "edit"; has several`)
	}
	if e := a.Edit; e != nil {
		if err := CheckRelPath(e.Path); err != nil {
			return fieldErr(p+".edit.path", err.Error())
		}
		if e.Write && (e.Old != "" || e.ReplaceAll) {
			return fieldErr(p+".edit", `"write" replaces the whole file: no "old" or "replace_all"`)
		}
		if !e.Write && e.Old == "" {
			return fieldErr(p+".edit.old", `must not be empty (or set "write")`)
		}
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
		}{{"duration_s", r.DurationS}, {"avg_mib", r.AvgMiB}, {"peak_mib", r.PeakMiB}, {"before_mib", r.BeforeMiB}} {
			if err := nonNeg(p+".recorded."+f.name, f.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateSandbox checks what the workflow asks of its sandbox: the
// workspace seed, the environment and the binds.
func (w Workflow) validateSandbox() error {
	if ws := w.Workspace; ws != nil {
		if !filepath.IsAbs(ws.Archive) {
			return fieldErr("workspace.archive", "must be an absolute path")
		}
		if ws.Strip < 0 {
			return fieldErr("workspace.strip", "must be >= 0")
		}
		if ws.Mount != "" {
			if err := checkTarget(ws.Mount); err != nil {
				return fieldErr("workspace.mount", err.Error())
			}
		}
	}
	for i, kv := range w.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return fieldErr(fmt.Sprintf("env[%d]", i), "must be KEY=VALUE")
		}
	}
	for i, b := range w.Binds {
		p := fmt.Sprintf("binds[%d]", i)
		if !filepath.IsAbs(b.Source) {
			return fieldErr(p+".source", "must be an absolute path")
		}
		if err := checkTarget(b.Target); err != nil {
			return fieldErr(p+".target", err.Error())
		}
	}
	return nil
}

// CheckRelPath says why p cannot name a file inside a directory: it must be
// relative, clean and without a ".." component.
func CheckRelPath(p string) error {
	switch {
	case p == "" || p == ".":
		return errors.New("must name a file")
	case filepath.IsAbs(p):
		return fmt.Errorf("%q must be relative", p)
	case filepath.Clean(p) != p:
		return fmt.Errorf("%q must be clean", p)
	case p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("%q must not leave its directory", p)
	}
	return nil
}

// checkTarget says why p cannot be a mount point in a sandbox: it must be
// absolute, clean and not the root.
func checkTarget(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
		return fmt.Errorf("%q must be a clean absolute path other than /", p)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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
