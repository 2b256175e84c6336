package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SchedExtFeature names the kernel feature the sched_ext actuator needs.
const SchedExtFeature = "sched_ext (CONFIG_SCHED_CLASS_EXT)"

// DetectSchedExt reports whether the kernel under sysRoot (normally "/sys")
// has sched_ext. It returns nil when sysRoot/kernel/sched_ext exists and an
// *UnsupportedFeatureError when it does not.
func DetectSchedExt(sysRoot string) error {
	p := filepath.Join(sysRoot, "kernel", "sched_ext")
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &UnsupportedFeatureError{Feature: SchedExtFeature, Path: p}
	case err != nil:
		return fmt.Errorf("detecting sched_ext: %w", err)
	case !st.IsDir():
		return &UnsupportedFeatureError{Feature: SchedExtFeature, Path: p}
	}
	return nil
}

// NewSchedExt would return the seed's actuator: a sched_ext scheduler that
// holds denied cgroups' runnable tasks in a waiting dispatch queue. It
// returns DetectSchedExt's error on kernels without sched_ext, and
// ErrNoSchedExtProgram otherwise, since tenon does not yet ship the BPF program.
func NewSchedExt(sysRoot string) (Actuator, error) {
	if err := DetectSchedExt(sysRoot); err != nil {
		return nil, err
	}
	return nil, ErrNoSchedExtProgram
}
