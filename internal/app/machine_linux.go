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

// Machine describes this host for results files: Host and the load
// average at the end of the run.
func Machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	return fmt.Sprintf("%s"+loadSuffix+"%s", Host(), strings.Join(f[:min(3, len(f))], " "))
}

const loadSuffix = ", load average at the end "

// HostOf is the Host part of a Machine description.
func HostOf(machine string) string {
	h, _, _ := strings.Cut(machine, loadSuffix)
	return h
}

// Host is what of this host a measurement depends on and a results file
// names per case: cores, RAM, kernel and cgroup memory version.
func Host() string {
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
	return fmt.Sprintf("%d cores, %s RAM, Linux %s, cgroup memory %s", runtime.NumCPU(), units.FormatSize(mem), rel, memVersion())
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
