//go:build linux

package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

func TestParseNSpid(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr bool
	}{
		{"nested", "Name:\tsh\nPid:\t4242\nNSpid:\t4242\t7\n", []int{4242, 7}, false},
		{"host only", "NSpid:\t12\n", []int{12}, false},
		{"missing", "Name:\tsh\n", nil, true},
		{"garbage", "NSpid:\tx\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseNSpid(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
				t.Fatalf("parseNSpid = %v, %v; want %v, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestHostPid(t *testing.T) {
	proc := t.TempDir()
	for pid, status := range map[string]string{
		"100": "NSpid:\t100\t1\n",
		"101": "NSpid:\t101\t5\n",
		"102": "NSpid:\t102\n",
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		cands []int
		ns    int
		want  int
	}{
		{"found", []int{100, 101}, 5, 101},
		{"init", []int{100, 101}, 1, 100},
		{"exited candidate skipped", []int{999, 101}, 5, 101},
		{"absent", []int{100, 102}, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hostPid(proc, tt.cands, tt.ns)
			if got != tt.want || (tt.want == 0) != errors.Is(err, errNoHostPid) {
				t.Fatalf("hostPid = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestExecutorGate(t *testing.T) {
	enc, dec := startExecutor(t)
	cwd := t.TempDir()
	tests := []struct {
		name     string
		abort    bool
		wantExit int
		wantOut  string
	}{
		{"open runs the action", false, 0, "ran\n"},
		{"abort ends it unstarted", true, 125, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := uint64(100 + i)
			if err := enc.Encode(request{Op: opExec, Seq: seq, Gate: true, Shell: "touch ran-" + tt.name[:4] + "; echo ran", Cwd: cwd}); err != nil {
				t.Fatal(err)
			}
			var g response
			if err := dec.Decode(&g); err != nil {
				t.Fatal(err)
			}
			if g.Op != opGate || g.Seq != seq || g.Pid <= 0 {
				t.Fatalf("first message %+v, want a gate with a pid", g)
			}
			// Blocked on the gate: the action has not run yet.
			time.Sleep(50 * time.Millisecond)
			if _, err := os.Stat(filepath.Join(cwd, "ran-"+tt.name[:4])); err == nil {
				t.Fatal("the action ran before the gate opened")
			}
			if err := enc.Encode(request{Op: opOpen, Seq: seq, Abort: tt.abort}); err != nil {
				t.Fatal(err)
			}
			var r response
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			if r.Op != opResult || r.ExitCode != tt.wantExit || string(r.Stdout) != tt.wantOut {
				t.Fatalf("result %+v (stdout %q), want exit %d stdout %q", r, r.Stdout, tt.wantExit, tt.wantOut)
			}
		})
	}
}

// TestScopedDropsPageCache: a tool that leaves 200 MiB of page cache
// behind runs in a scope; after it exits the scope is gone and the
// sandbox's and the domain's memory are back near their levels before.
func TestScopedDropsPageCache(t *testing.T) {
	b, dom := liveBackend(t, 2<<30)
	ctx := context.Background()
	info, err := b.Create(ctx, sandbox.Spec{ID: "tenon-test-scoped", Workspace: t.TempDir()})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	sb, err := cgroup.Open(b.cfg.Layout, info.CgroupPath)
	if err != nil {
		t.Fatal(err)
	}
	usage := func(g cgroup.Group) int64 {
		m, err := g.Memory()
		if err != nil {
			t.Fatal(err)
		}
		return m.Usage
	}
	const mib = 1 << 20
	const tolerance = 40 * mib
	tests := []struct {
		name      string
		scoped    bool
		wantFreed bool
	}{
		// The unscoped run shows the test can fail: the cache stays.
		{"unscoped keeps the cache", false, false},
		{"scoped drops the cache", true, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sbBefore, domBefore := usage(sb), usage(dom.Group())
			res, err := b.Exec(ctx, info.ID, sandbox.ExecRequest{
				Shell:  "dd if=/dev/zero of=/workspace/big" + string(rune('a'+i)) + " bs=1M count=200 conv=fsync status=none && echo done",
				Scoped: tt.scoped,
			})
			if err != nil || res.ExitCode != 0 || string(res.Stdout) != "done\n" {
				t.Fatalf("Exec: %+v %v (stderr %q)", res, err, res.Stderr)
			}
			sbAfter, domAfter := usage(sb), usage(dom.Group())
			t.Logf("sandbox %d → %d MiB, domain %d → %d MiB", sbBefore/mib, sbAfter/mib, domBefore/mib, domAfter/mib)
			freed := sbAfter-sbBefore < tolerance && domAfter-domBefore < tolerance
			if freed != tt.wantFreed {
				t.Fatalf("memory back near its level before = %v, want %v", freed, tt.wantFreed)
			}
			if tt.scoped {
				dirs, err := b.cfg.Layout.Dirs(info.CgroupPath)
				if err != nil {
					t.Fatal(err)
				}
				matches, _ := filepath.Glob(filepath.Join(dirs[cgroup.Memory], "tool-*"))
				if len(matches) != 0 {
					t.Fatalf("scopes left behind: %v", matches)
				}
			}
		})
	}
	// A trivial command takes the fast path and still works.
	if res, err := b.Exec(ctx, info.ID, sandbox.ExecRequest{Shell: "echo hi", Scoped: true}); err != nil || string(res.Stdout) != "hi\n" {
		t.Fatalf("trivial scoped exec: %+v %v", res, err)
	}
}
