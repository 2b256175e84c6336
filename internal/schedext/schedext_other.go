//go:build !linux || !amd64

package schedext

import (
	"fmt"
	"runtime"
)

// OpsName is the scheduler's name in /sys/kernel/sched_ext/root/ops.
const OpsName = "tenon_gate"

// Scheduler is the loaded gate scheduler; it cannot be loaded on this
// platform.
type Scheduler struct{}

var errPlatform = fmt.Errorf("%w: not built for %s/%s (linux/amd64 only)", ErrUnavailable, runtime.GOOS, runtime.GOARCH)

// State is unavailable on this platform.
func State() (string, error) { return "", errPlatform }

// Supported is ErrUnavailable on this platform.
func Supported() error { return errPlatform }

// Load fails with ErrUnavailable on this platform.
func Load(Options) (*Scheduler, error) { return nil, errPlatform }

func (*Scheduler) Enabled() bool                           { return false }
func (*Scheduler) Deny(uint64, float64) error              { return errPlatform }
func (*Scheduler) Allow(uint64) error                      { return errPlatform }
func (*Scheduler) Stats(uint64) (CgroupStats, bool, error) { return CgroupStats{}, false, errPlatform }
func (*Scheduler) Counters() (Counters, error)             { return Counters{}, errPlatform }
func (*Scheduler) Exit() ExitInfo                          { return ExitInfo{} }
func (*Scheduler) Close() error                            { return nil }
func CgroupID(string) (uint64, error)                      { return 0, errPlatform }
