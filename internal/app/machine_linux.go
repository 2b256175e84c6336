package app

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/units"
)

// Machine describes this host for results files: cores, RAM, kernel,
// cgroup memory version and the load average at the end of the run.
func Machine() string {
	var u syscall.Utsname
	_ = syscall.Uname(&u)
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	mem, _ := cgroup.MemTotal("/proc")
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("%d cores, %s RAM, Linux %s, cgroup memory %s, load average at the end %s", runtime.NumCPU(), units.FormatSize(mem), rel, memVersion(),
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
}

func memVersion() string {
	l, err := cgroup.Detect("/proc")
	if err != nil {
		return "unknown"
	}
	if m, ok := l.Controller(cgroup.Memory); ok {
		return fmt.Sprintf("v%d", m.Version)
	}
	return "none"
}
