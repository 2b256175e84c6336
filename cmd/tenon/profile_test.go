package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartProfile: TENON_CPU_PROFILE names the file the whole command's
// CPU profile goes to, and is not passed on to the command's children.
func TestStartProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv("TENON_CPU_PROFILE", path)
	var stderr strings.Builder
	stop := startProfile(&cliEnv{stderr: &stderr})
	if v, ok := os.LookupEnv("TENON_CPU_PROFILE"); ok {
		t.Errorf("TENON_CPU_PROFILE still set (%q): the command's children would write over the profile", v)
	}
	stop()
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is gzip'd protobuf.
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("profile is %d bytes, not gzip'd", len(b))
	}
}

// TestStartProfileBadPath: a profile that cannot be written says so and
// the command runs unprofiled.
func TestStartProfileBadPath(t *testing.T) {
	t.Setenv("TENON_CPU_PROFILE", filepath.Join(t.TempDir(), "missing", "cpu.pprof"))
	var stderr strings.Builder
	startProfile(&cliEnv{stderr: &stderr})()
	if !strings.Contains(stderr.String(), "TENON_CPU_PROFILE") || !strings.Contains(stderr.String(), "no profile written") {
		t.Errorf("stderr = %q, want the reason no profile was written", stderr.String())
	}
}
