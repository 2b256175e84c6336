//go:build linux

package process

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// TestHostileForkBomb runs a fork bomb (issue 22, finding 3): the
// sandbox's pids.max caps it, and nothing of it survives the action, when
// it exits and when it times out. The cap is Config.PidsMax at bombCap, not
// DefaultPidsMax: in internal/vmtest's emulated guest the bomb peaked at
// 638 processes within its two seconds and never reached 1024.
func TestHostileForkBomb(t *testing.T) {
	if _, ok := liveLayout(t).Controller(cgroup.Pids); !ok {
		t.Skip("the fork bomb test needs the cgroup pids controller")
	}
	const bombCap = 128
	b, _ := liveBackend(t, 4<<30, func(c *Config) { c.PidsMax = bombCap })
	info := mustCreate(t, b, "bomb")
	dirs, err := b.cfg.Layout.Dirs(info.CgroupPath)
	if err != nil {
		t.Fatal(err)
	}
	pidsMax := filepath.Join(dirs[cgroup.Pids], "pids.max")
	if _, err := os.Stat(pidsMax); err != nil {
		t.Fatalf("no pids.max for %s: %v", info.CgroupPath, err)
	}
	if got, _ := os.ReadFile(pidsMax); strings.TrimSpace(string(got)) != fmt.Sprint(bombCap) {
		t.Fatalf("pids.max = %q, want %d", got, bombCap)
	}
	events := filepath.Join(dirs[cgroup.Pids], "pids.events")
	const bomb = `b() { b | b & }; b`
	tests := []struct {
		name    string
		shell   string
		timeout time.Duration
	}{
		{"action exits", bomb + "; sleep 2; exit 0", 10 * time.Second},
		{"action times out", bomb + "; sleep 60", 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := b.Exec(liveCtx(t), "bomb", sandbox.ExecRequest{Shell: tc.shell, Timeout: tc.timeout})
			if err != nil {
				t.Fatalf("exec: %v", err)
			}
			if el := time.Since(start); el > tc.timeout+deadlineGrace+actionKillTimeout {
				t.Errorf("returned after %v, want within %v plus the graces", el, tc.timeout)
			}
			if got, _ := os.ReadFile(events); !strings.HasPrefix(string(got), "max ") || strings.TrimSpace(string(got)) == "max 0" {
				t.Errorf("pids.events %q: the cap was never hit", got)
			}
			st, err := b.Stats(liveCtx(t), "bomb")
			if err != nil || st.Procs != 1 {
				t.Fatalf("after the action: Procs %d (%v), want 1 (init only)", st.Procs, err)
			}
			if out := mustSh(t, b, "bomb", "echo alive"); out != "alive\n" {
				t.Errorf("after the bomb: %q", out)
			}
		})
	}
}
