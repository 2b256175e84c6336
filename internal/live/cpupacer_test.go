package live

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// fakeCPUTree is a cgroup layout in a temp dir with group tenon/sb-1 in
// the memory and cpu hierarchies (one unified tree on v2, one per
// controller on v1); it returns the layout and the group's cpu directory.
func fakeCPUTree(t *testing.T, v cgroup.Version, withCPU bool) (*cgroup.Layout, string) {
	t.Helper()
	root := t.TempDir()
	l := &cgroup.Layout{Controllers: map[string]cgroup.Mount{}}
	mount := func(name string) string {
		d := root
		if v == cgroup.V1 {
			d = filepath.Join(root, name)
		}
		l.Controllers[name] = cgroup.Mount{Version: v, Root: d}
		if err := os.MkdirAll(filepath.Join(d, "tenon", "sb-1"), 0o755); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(d, "tenon", "sb-1")
	}
	if v == cgroup.V2 {
		l.Unified = root
	}
	mount(cgroup.Memory)
	if !withCPU {
		return l, ""
	}
	return l, mount(cgroup.CPU)
}

// checkFiles compares the files of dir with want (name -> content).
func checkFiles(t *testing.T, when, dir string, want map[string]string) {
	t.Helper()
	for f, w := range want {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if got := string(bytes.TrimSpace(b)); err != nil || got != w {
			t.Errorf("after %s %s = %q (%v), want %q", when, f, got, err, w)
		}
	}
}

// TestCPUPacer: deny writes rate × period as the quota in the version's
// files, allow removes it; a bad rate, pacing a missing group and a layout
// without the cpu controller are errors, releasing a group that is gone
// is not.
func TestCPUPacer(t *testing.T) {
	tests := []struct {
		name       string
		v          cgroup.Version
		period     time.Duration
		rate       float64
		wantDenied map[string]string // file -> content after Deny
		wantLifted map[string]string // after Allow
	}{
		{name: "v2", v: cgroup.V2, rate: 0.05,
			wantDenied: map[string]string{"cpu.max": "5000 100000"},
			wantLifted: map[string]string{"cpu.max": "max 100000"}},
		{name: "v2 own period", v: cgroup.V2, period: 20 * time.Millisecond, rate: 0.25,
			wantDenied: map[string]string{"cpu.max": "5000 20000"},
			wantLifted: map[string]string{"cpu.max": "max 20000"}},
		{name: "v2 floor", v: cgroup.V2, rate: 0.001,
			wantDenied: map[string]string{"cpu.max": "1000 100000"}},
		{name: "v1", v: cgroup.V1, rate: 0.1,
			wantDenied: map[string]string{"cpu.cfs_quota_us": "10000", "cpu.cfs_period_us": "100000"},
			wantLifted: map[string]string{"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, dir := fakeCPUTree(t, tt.v, true)
			p, err := NewCPUPacer(l)
			if err != nil {
				t.Fatal(err)
			}
			p.Period = tt.period
			if p.Name() != "cpu" || !p.Enabled() {
				t.Errorf("name %q enabled %v", p.Name(), p.Enabled())
			}
			if err := p.Deny("tenon/sb-1", tt.rate); err != nil {
				t.Fatal(err)
			}
			checkFiles(t, "deny", dir, tt.wantDenied)
			if err := p.Allow("tenon/sb-1"); err != nil {
				t.Fatal(err)
			}
			checkFiles(t, "allow", dir, tt.wantLifted)
		})
	}
	t.Run("errors", func(t *testing.T) {
		l, _ := fakeCPUTree(t, cgroup.V2, true)
		p, err := NewCPUPacer(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, rate := range []float64{0, -0.5} {
			if err := p.Deny("tenon/sb-1", rate); err == nil {
				t.Errorf("rate %v accepted", rate)
			}
		}
		if err := p.Deny("tenon/gone", 0.05); err == nil {
			t.Error("pacing a missing group: no error")
		}
		if err := p.Allow("tenon/gone"); err != nil {
			t.Errorf("releasing a group that is gone: %v", err)
		}
		noCPU, _ := fakeCPUTree(t, cgroup.V1, false)
		if _, err := NewCPUPacer(noCPU); err == nil {
			t.Error("a layout without the cpu controller was accepted")
		}
		if _, err := NewCPUPacer(nil); err == nil {
			t.Error("no layout was accepted")
		}
	})
}
