package swap

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Environment of a test binary re-executed as a memory hog.
const (
	hogEnv    = "TENON_SWAP_HOG"    // bytes to allocate and touch
	cgroupEnv = "TENON_SWAP_CGROUP" // v1 memory cgroup dir the hog joins first
)

func TestMain(m *testing.M) {
	if n := os.Getenv(hogEnv); n != "" {
		os.Exit(hogMain(n, os.Getenv(cgroupEnv)))
	}
	os.Exit(m.Run())
}

func hogMain(size, cg string) int {
	n, err := strconv.Atoi(size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad size:", err)
		return 2
	}
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "joining cgroup:", err)
		return 2
	}
	if err := hog(n); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
