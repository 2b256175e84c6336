package memtool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Environment of a test binary re-executed as `tenon tool mem`.
const (
	childEnv  = "TENON_MEMTOOL_CHILD"  // "1": run the tool with os.Args[1:]
	cgroupEnv = "TENON_MEMTOOL_CGROUP" // v1 memory cgroup dir the child joins before allocating
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(childMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// childMain is what cmd/tenon does for `tenon tool mem`.
func childMain(args []string) int {
	if len(args) >= 2 && args[0] == "tool" && args[1] == "mem" {
		args = args[2:]
	}
	if dir := os.Getenv(cgroupEnv); dir != "" {
		pid := []byte(strconv.Itoa(os.Getpid()))
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "joining cgroup:", err)
			return 2
		}
	}
	o, err := ParseArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	o.Out = os.Stdout
	if os.Getenv(cgroupEnv) != "" {
		// Its own memory was charged before it joined the cgroup: only
		// the arena's is the cgroup's to see.
		o.CountOwn = false
	}
	if err := Run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
