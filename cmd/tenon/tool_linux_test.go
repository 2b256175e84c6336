//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestToolMemCountsOwnMemory runs `tenon tool mem` as the CLI parses it
// (this test binary stands in for tenon, TestMain) and reads the
// process's resident anonymous memory while it holds its peak: by default
// the tool's own memory (its Go runtime, about 3 MiB) counts toward the
// curve, so the process holds the profile's peak, not the peak plus
// itself; with --count-own=false the tool comes on top.
func TestToolMemCountsOwnMemory(t *testing.T) {
	const peak = 32 * units.MiB
	counted := holdPeak(t, "--peak", "32MiB", "--hold", "forever")
	onTop := holdPeak(t, "--peak", "32MiB", "--hold", "forever", "--count-own=false")
	t.Logf("RssAnon holding a 32 MiB peak: %s counting the tool's own memory, %s without",
		units.FormatSize(counted), units.FormatSize(onTop))
	if counted > peak+units.MiB {
		t.Errorf("with the default --count-own the tool holds %s for a 32 MiB peak, want at most 33 MiB", units.FormatSize(counted))
	}
	if onTop < peak+units.MiB {
		t.Errorf("with --count-own=false the tool holds %s for a 32 MiB peak, want its own memory on top (at least 33 MiB)", units.FormatSize(onTop))
	}
}

// holdPeak starts `tool mem args...`, waits until its RssAnon is steady at
// 30 MiB or more (10 s at most), stops it and returns that RssAnon.
func holdPeak(t *testing.T, args ...string) int64 {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("/proc/self/exe", append([]string{"tool", "mem"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting tool mem: %v", err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var last int64 = -1
	steady := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(status)
		if err != nil {
			t.Fatalf("reading %s: %v (output: %s)", status, err, out.String())
		}
		st, err := pageout.ParseStatus(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("parsing %s: %v", status, err)
		}
		v := st.RssAnon
		if v >= 30*units.MiB && v == last {
			if steady++; steady >= 4 {
				return v
			}
		} else {
			steady = 0
		}
		last = v
	}
	t.Fatalf("tool mem %v: RssAnon %s, not steady at 30 MiB or more within 10 s (output: %s)", args, units.FormatSize(last), out.String())
	return 0
}
