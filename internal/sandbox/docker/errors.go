package docker

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDaemonUnreachable means dockerd did not answer on its socket.
var ErrDaemonUnreachable = errors.New("docker: daemon unreachable")

// ErrNoLayerDir means the storage driver does not expose the container's
// writable layer as a directory (only overlay2 does).
var ErrNoLayerDir = errors.New("docker: writable layer directory not available")

// DaemonError says which daemon address could not be reached and how to
// start dockerd. errors.Is(err, ErrDaemonUnreachable) holds for it.
type DaemonError struct {
	Host string // e.g. unix:///var/run/docker.sock
	Err  error
}

func (e *DaemonError) Error() string {
	return fmt.Sprintf("cannot reach dockerd at %s: start it with 'dockerd &' or 'systemctl start docker' (%v)",
		strings.TrimPrefix(e.Host, "unix://"), e.Err)
}

func (e *DaemonError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrDaemonUnreachable) true.
func (e *DaemonError) Is(target error) bool { return target == ErrDaemonUnreachable }
