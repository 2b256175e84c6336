package ksm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// SetMemoryMerge turns PR_SET_MEMORY_MERGE on or off for the calling
// process: every anonymous area becomes a KSM candidate. Since Linux 6.7
// the setting is inherited across fork and kept across exec.
func SetMemoryMerge(on bool) error {
	var v uintptr
	if on {
		v = 1
	}
	if err := unix.Prctl(unix.PR_SET_MEMORY_MERGE, v, 0, 0, 0); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("%w: PR_SET_MEMORY_MERGE: %v", ErrNotSupported, err)
		}
		return fmt.Errorf("prctl(PR_SET_MEMORY_MERGE, %d): %w", v, err)
	}
	return nil
}

// ExecWithMerge sets PR_SET_MEMORY_MERGE and replaces the process with
// argv (argv[0] looked up in PATH), keeping the environment. It returns
// only on error. The CLI wires it to a hidden mode so a sibling can be
// started under KSM.
func ExecWithMerge(argv []string) error {
	if len(argv) == 0 {
		return errors.New("ksm exec: no command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("ksm exec: %w", err)
	}
	if err := SetMemoryMerge(true); err != nil {
		return fmt.Errorf("ksm exec: %w", err)
	}
	if err := unix.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("ksm exec %s: %w", path, err)
	}
	return nil
}
