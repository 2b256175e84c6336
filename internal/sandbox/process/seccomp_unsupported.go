//go:build linux && !amd64 && !arm64

package process

import (
	"fmt"
	"runtime"
)

// confine fails: the seccomp filter knows the system call numbers of amd64
// and arm64 only, and a sandbox without it is not started.
func confine() error {
	return fmt.Errorf("process backend: no seccomp filter for %s", runtime.GOARCH)
}
