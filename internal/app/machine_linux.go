package app

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/swap"
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
// names per case: cores, RAM, kernel, cgroup memory version and swap (the
// page-out tier of residency and of memory intents runs only with swap on).
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
	return fmt.Sprintf("%d cores, %s RAM, Linux %s, cgroup memory %s, %s", runtime.NumCPU(), units.FormatSize(mem), rel, memVersion(), swapDesc())
}

// swapDesc describes the host's swap as Host names it.
func swapDesc() string {
	st, err := swap.GetStatus()
	if err != nil {
		return "swap unknown"
	}
	return swapSummary(st.Swaps)
}

// swapSummary is "no swap", or the swap devices' total size and kinds:
// "swap 4.00 GiB (zram)", "swap 6.00 GiB (zram, partition)".
func swapSummary(entries []swap.SwapEntry) string {
	if len(entries) == 0 {
		return "no swap"
	}
	var size int64
	var kinds []string
	for _, e := range entries {
		size += e.Size
		k := e.Type
		if strings.HasPrefix(filepath.Base(e.Filename), "zram") {
			k = "zram"
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return fmt.Sprintf("swap %s (%s)", units.FormatSize(size), strings.Join(kinds, ", "))
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
