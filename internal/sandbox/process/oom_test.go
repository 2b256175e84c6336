//go:build linux

package process

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestOOMUnderDomainBudget runs two 180 MiB actions (held 5 s, so they meet
// at their peaks also in internal/vmtest's emulated guest) in two sandboxes of a
// 256 MiB domain: at the same time, at least one is OOM-killed and reported
// so; one after the other, neither is.
func TestOOMUnderDomainBudget(t *testing.T) {
	b, _ := liveBackend(t, 256<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ids := []string{"oom-a", "oom-b"}
	alloc := twoAllocators(ctx, t, b, ids)
	run := func(id string) sandbox.ExecResult {
		r, err := b.Exec(ctx, id, alloc)
		if err != nil {
			t.Errorf("Exec(%s): %v", id, err)
		}
		return r
	}

	tests := []struct {
		name       string
		concurrent bool
		wantOOM    bool
	}{
		{"at the same time", true, true},
		{"one after the other", false, false},
	}
	for _, tt := range tests {
		results := make([]sandbox.ExecResult, len(ids))
		if tt.concurrent {
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Go(func() { results[i] = run(id) })
			}
			wg.Wait()
		} else {
			for i, id := range ids {
				results[i] = run(id)
			}
		}
		oom := 0
		for i, r := range results {
			desc := fmt.Sprintf("%s: %s exit %d peak %d MiB oom %v stderr %q", tt.name, ids[i], r.ExitCode, r.PeakMemory>>20, r.OOMKilled, r.Stderr)
			t.Log(desc)
			if r.OOMKilled {
				oom++
				if r.ExitCode == 0 {
					t.Errorf("%s: OOMKilled with exit 0", desc)
				}
			} else if r.ExitCode != 0 {
				t.Errorf("%s: failed without an OOM kill", desc)
			} else if r.PeakMemory < 180<<20 {
				t.Errorf("%s: peak below the 180 MiB allocated", desc)
			}
		}
		if tt.wantOOM && oom == 0 {
			t.Errorf("%s: no action was OOM-killed, want at least one", tt.name)
		}
		if !tt.wantOOM && oom != 0 {
			t.Errorf("%s: %d actions OOM-killed, want none", tt.name, oom)
		}
	}
}

// TestOOMGroupTakesSandbox: with Config.OOMGroup on cgroup v2, the OOM
// kill of an action takes its whole sandbox: Exec returns the OOM-killed
// result without an error, the next Exec in that sandbox fails with
// ErrSandboxDead, and the other sandbox goes on.
func TestOOMGroupTakesSandbox(t *testing.T) {
	if m, _ := liveLayout(t).Controller(cgroup.Memory); m.Version != cgroup.V2 {
		t.Skip("memory.oom.group needs the cgroup v2 memory controller (v1's OOM killer takes one process)")
	}
	b, _ := liveBackend(t, 256<<20, func(c *Config) { c.OOMGroup = true })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ids := []string{"grp-a", "grp-b"}
	alloc := twoAllocators(ctx, t, b, ids)
	results := make([]sandbox.ExecResult, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { results[i], errs[i] = b.Exec(ctx, id, alloc) })
	}
	wg.Wait()
	killed := -1
	for i, r := range results {
		t.Logf("%s: exit %d oom %v err %v", ids[i], r.ExitCode, r.OOMKilled, errs[i])
		if errs[i] != nil {
			t.Errorf("Exec(%s) = %v; an OOM kill of the whole sandbox is a result, not an error", ids[i], errs[i])
		}
		if r.OOMKilled {
			killed = i
		}
	}
	if killed < 0 {
		t.Fatal("no action was OOM-killed: the case does not exercise the group kill")
	}
	echo := sandbox.ExecRequest{Shell: "echo ok", Timeout: 10 * time.Second}
	if _, err := b.Exec(ctx, ids[killed], echo); !errors.Is(err, sandbox.ErrSandboxDead) {
		t.Errorf("Exec in the OOM-killed sandbox %s = %v, want ErrSandboxDead (the kill takes init too)", ids[killed], err)
	}
	if other := ids[1-killed]; !results[1-killed].OOMKilled {
		if r, err := b.Exec(ctx, other, echo); err != nil || r.ExitCode != 0 {
			t.Errorf("Exec in the other sandbox %s = %+v, %v; want it alive", other, r, err)
		}
	}
}

// twoAllocators creates the sandboxes ids and returns the action both
// tests run in them: 180 MiB, held 5 s, so two at once overrun 256 MiB.
func twoAllocators(ctx context.Context, t *testing.T, b sandbox.Backend, ids []string) sandbox.ExecRequest {
	t.Helper()
	for _, id := range ids {
		if _, err := b.Create(ctx, sandbox.Spec{ID: id, Workspace: filepath.Join(t.TempDir(), id)}); err != nil {
			t.Fatalf("Create(%s): %v", id, err)
		}
	}
	return sandbox.ExecRequest{
		Argv:    append([]string{exeMount}, memtool.Args(trajectory.MemProfile{PeakMiB: 180, RampS: 0.2, HoldS: 5})...),
		Timeout: 30 * time.Second,
	}
}
