package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeKernel replaces the package's kernel entry points for one test: rmdir
// removes a fake directory with its files, kill records the pid (and runs
// onKill), and write runs onWrite before writing the file. Fake pids are
// never signalled.
type fakeKernel struct {
	mu      sync.Mutex
	killed  []int
	rmdirs  []string
	writes  []string // "path=value"
	onWrite func(path, value string) (string, error)
	onKill  func(pid int)
	onRmdir func(path string) error
}

func newFakeKernel(t *testing.T) *fakeKernel {
	t.Helper()
	k := &fakeKernel{}
	w, wn, r, kl := sysWrite, sysWriteNoReclaim, sysRmdir, sysKill
	sysWrite = func(p, v string) error {
		k.mu.Lock()
		k.writes = append(k.writes, p+"="+v)
		hook := k.onWrite
		k.mu.Unlock()
		if hook != nil {
			nv, err := hook(p, v)
			if err != nil {
				return err
			}
			v = nv
		}
		return writeFile(p, v)
	}
	sysWriteNoReclaim = sysWrite
	sysRmdir = func(p string) error {
		k.mu.Lock()
		k.rmdirs = append(k.rmdirs, p)
		hook := k.onRmdir
		k.mu.Unlock()
		if hook != nil {
			if err := hook(p); err != nil {
				return err
			}
		}
		if _, err := os.Stat(p); err != nil {
			return err
		}
		return os.RemoveAll(p)
	}
	sysKill = func(pid int) error {
		k.mu.Lock()
		k.killed = append(k.killed, pid)
		hook := k.onKill
		k.mu.Unlock()
		if hook != nil {
			hook(pid)
		}
		return nil
	}
	t.Cleanup(func() { sysWrite, sysWriteNoReclaim, sysRmdir, sysKill = w, wn, r, kl })
	return k
}

// fakeV1 builds a fake v1 tree (memory, cpu, cpuacct, freezer, pids each on
// its own hierarchy, as on tenon's build hosts) and a fake /proc.
func fakeV1(t *testing.T) *Layout {
	t.Helper()
	root := t.TempDir()
	l := &Layout{Controllers: map[string]Mount{}, ProcRoot: filepath.Join(root, "proc"), LockDir: filepath.Join(root, "locks")}
	for _, c := range controllers {
		l.Controllers[c] = Mount{Version: V1, Root: filepath.Join(root, c)}
		mkdir(t, l.Controllers[c].Root)
	}
	mkdir(t, l.ProcRoot)
	return l
}

// fakeV2 builds a fake unified tree offering cpu, memory and pids.
func fakeV2(t *testing.T) *Layout {
	t.Helper()
	root := t.TempDir()
	u := filepath.Join(root, "sys", "fs", "cgroup")
	writeFiles(t, u, map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n", "cgroup.subtree_control": ""})
	l, err := LayoutFromMounts([]MountInfo{{Root: "/", MountPoint: "/sys/fs/cgroup", FSType: "cgroup2"}}, root)
	if err != nil {
		t.Fatal(err)
	}
	l.ProcRoot = filepath.Join(root, "proc")
	l.LockDir = filepath.Join(root, "locks")
	mkdir(t, l.ProcRoot)
	return l
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

// writeFiles writes name -> content under dir, creating dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	mkdir(t, dir)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// mustCreate creates path in the fake layout.
func mustCreate(t *testing.T, l *Layout, path string) *group {
	t.Helper()
	g, err := Create(l, path)
	if err != nil {
		t.Fatalf("Create(%s): %v", path, err)
	}
	return g.(*group)
}
