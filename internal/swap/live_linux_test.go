//go:build linux

package swap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLiveEnableDisable turns real zram swap on and off. Its cleanup turns
// swap off and resets the device even when the test fails half-way.
func TestLiveEnableDisable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live zram swap test needs root for swapon(2)")
	}
	m := NewManager(slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	if _, err := os.Stat(m.Paths.sys(m.Device, "")); err != nil {
		t.Skipf("live zram swap test needs the zram module (/sys/block/zram0): %v", err)
	}
	unlock, err := Lock() // zram0 is shared with other packages' live tests
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	before, err := m.Status()
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if before.Active || before.DiskSize != 0 {
		t.Skipf("zram0 is already in use (active=%v disksize=%d): not touching it", before.Active, before.DiskSize)
	}
	t.Cleanup(func() {
		if err := m.Disable(context.Background()); err != nil {
			t.Errorf("cleanup Disable: %v", err)
		}
		// Belt and braces: the device was unused before the test, so it is ours.
		if st, err := m.Status(); err != nil || st.Active || st.DiskSize != 0 {
			_ = Swapoff(m.Paths.node(m.Device))
			_ = m.reset()
			t.Errorf("cleanup: zram0 still set up after Disable (%+v, %v); forced swapoff and reset", st, err)
		}
	})

	const size = 64 << 20
	if err := Enable(context.Background(), size, m.Log); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	st, err := GetStatus()
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	t.Logf("enabled: %+v swap %+v", st, st.Swap)
	if !st.Active || !st.Ours || st.DiskSize != size {
		t.Fatalf("after Enable: active=%v ours=%v disksize=%d; want true true %d", st.Active, st.Ours, st.DiskSize, size)
	}
	if st.Swap.Priority != DefaultPriority || st.Swap.Size < size-int64(m.PageSize) || st.Swap.Size > size {
		t.Errorf("/proc/swaps line %+v: want priority %d and size about %d", *st.Swap, DefaultPriority, size)
	}
	if want := pickAlgorithmFromDevice(t, m); want != "" && st.Algorithm != want {
		t.Errorf("compressor %q, want %q", st.Algorithm, want)
	}
	swapUnderLimit(t, m)
	if err := Disable(context.Background()); err != nil {
		t.Fatalf("Disable: %v", err)
	}
	st, err = GetStatus()
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.Active || st.DiskSize != 0 {
		t.Fatalf("after Disable: active=%v disksize=%d; want false 0", st.Active, st.DiskSize)
	}
}

func pickAlgorithmFromDevice(t *testing.T, m *Manager) string {
	f, err := os.Open(m.Paths.sys(m.Device, "comp_algorithm"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	avail, _, err := ParseCompAlgorithm(f)
	if err != nil {
		t.Fatal(err)
	}
	return pickAlgorithm(avail, "zstd", "lz4")
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// swapUnderLimit runs a 64 MiB hog in a v1 memory cgroup limited to 32 MiB:
// with zram swap on it must finish (not be OOM-killed) and zram must have
// stored pages.
func swapUnderLimit(t *testing.T, m *Manager) {
	const root = "/sys/fs/cgroup/memory"
	if _, err := os.Stat(filepath.Join(root, "memory.memsw.max_usage_in_bytes")); err != nil {
		t.Logf("skipping the swap-under-limit check: cgroup v1 memory with swap accounting is absent: %v", err)
		return
	}
	cg := filepath.Join(root, fmt.Sprintf("tenon-test-swap-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatalf("creating cgroup: %v", err)
	}
	var cmd *exec.Cmd
	defer func() {
		if cmd != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		for i := 0; ; i++ {
			err := os.Remove(cg)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			if i == 100 {
				t.Errorf("removing cgroup %s: %v", cg, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := os.WriteFile(filepath.Join(cg, "memory.limit_in_bytes"), []byte("33554432"), 0o644); err != nil {
		t.Fatalf("limiting cgroup: %v", err)
	}
	cmd = exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), hogEnv+"="+strconv.Itoa(64<<20), cgroupEnv+"="+cg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("64 MiB hog under a 32 MiB limit failed with zram swap on: %v\n%s", err, out)
	}
	memsw := readTrim(t, filepath.Join(cg, "memory.memsw.max_usage_in_bytes"))
	f, err := os.Open(m.Paths.sys(m.Device, "mm_stat"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mm, err := ParseMMStat(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hog done: memsw max %s bytes, zram mem_used_max %d bytes", memsw, mm.MemUsedMax)
	if v, _ := strconv.ParseInt(memsw, 10, 64); v < 60<<20 {
		t.Errorf("memory.memsw.max_usage_in_bytes = %s, want >= 60 MiB (the hog did not touch its memory?)", memsw)
	}
	if mm.MemUsedMax == 0 {
		t.Errorf("zram mem_used_max = 0: nothing was swapped to zram")
	}
}

func readTrim(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
