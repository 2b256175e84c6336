package cgroup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// DefaultLockDir holds the workload domains' owner locks when the layout
// names no LockDir: a runtime directory, emptied at boot as the domains are.
const DefaultLockDir = "/run/tenon/domains"

// Owner is the owner record of a workload domain or a daemon's state
// directory: the process holding its lock.
type Owner struct {
	PID int `json:"pid"`
	// BootID is <proc>/sys/kernel/random/boot_id when the record was
	// written: a record from an earlier boot names no live process.
	BootID string `json:"boot_id"`
	// StartTicks is the owner's start time (field 22 of <proc>/<pid>/stat),
	// which tells the owner from a later process reusing its pid.
	StartTicks uint64    `json:"start_ticks,omitempty"`
	Command    string    `json:"command,omitempty"` // e.g. "tenon serve"
	Since      time.Time `json:"since"`
}

// InUseError means another live process owns what was to be locked.
type InUseError struct {
	What  string // e.g. `workload domain "tenon"`
	Path  string // the lock file
	Owner Owner  // zero PID when its record could not be read
}

func (e *InUseError) Error() string {
	who := "another process (no owner record in " + e.Path + ")"
	if e.Owner.PID > 0 {
		who = fmt.Sprintf("pid %d", e.Owner.PID)
		if e.Owner.Command != "" {
			who += fmt.Sprintf(" (%s, since %s)", e.Owner.Command, e.Owner.Since.Local().Format(time.DateTime))
		}
	}
	return fmt.Sprintf("cgroup: %s is in use by %s: stop that process first", e.What, who)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// OwnerLock is an exclusive flock on a file held for the owner's life,
// with the owner record written into the file. The kernel drops the lock
// when the process dies, so a lock that can be taken names no live owner.
type OwnerLock struct {
	f    *os.File
	path string
	// Previous is the record a process left in the file without releasing
	// it (it died); zero when the last owner released the lock (which
	// removes the file).
	Previous Owner
}

// AcquireOwner takes the lock at path (creating the file and its
// directory) for what, without waiting. A lock held by a live process
// fails with *InUseError naming it. A lock free but whose record names a
// process still alive on this boot is refused the same way (that owner
// lost its lock file, not its life). procRoot is /proc; command describes
// this process in the record.
func AcquireOwner(path, what, procRoot, command string) (*OwnerLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: creating lock directory for %s: %w", what, err)
	}
	f, err := lockFile(path, what)
	if err != nil {
		return nil, err
	}
	l := &OwnerLock{f: f, path: path}
	if prev, err := readOwner(f); err == nil && prev.PID > 0 {
		if prev.PID != os.Getpid() && ownerAlive(prev, procRoot) {
			l.unlock()
			return nil, &InUseError{What: what, Path: path, Owner: prev}
		}
		l.Previous = prev
	}
	self := Owner{PID: os.Getpid(), BootID: bootID(procRoot), Command: command, Since: time.Now().UTC()}
	self.StartTicks, _ = startTicks(procRoot, self.PID)
	b, err := json.Marshal(self)
	if err == nil {
		if err = f.Truncate(0); err == nil {
			if _, err = f.WriteAt(append(b, '\n'), 0); err == nil {
				err = f.Sync()
			}
		}
	}
	if err != nil {
		l.unlock()
		return nil, fmt.Errorf("cgroup: writing owner record of %s: %w", what, err)
	}
	return l, nil
}

// lockFile opens path and takes its flock without waiting. Release
// removes the file before it unlocks, so a lock taken on a file that is no
// longer the one at path is dropped and taken again on the new one.
func lockFile(path, what string) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("cgroup: opening lock of %s: %w", what, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			prev, _ := readOwner(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &InUseError{What: what, Path: path, Owner: prev}
			}
			return nil, fmt.Errorf("cgroup: locking %s: %w", what, err)
		}
		held, err1 := f.Stat()
		cur, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, cur) {
			return f, nil
		}
		f.Close() // released and removed meanwhile: lock the new file
	}
	return nil, fmt.Errorf("cgroup: locking %s: %s keeps being replaced", what, path)
}

// Release removes the lock file and drops the lock.
func (l *OwnerLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := os.Remove(l.path)
	l.unlock()
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return err
}

// unlock drops the lock and leaves the file with its record.
func (l *OwnerLock) unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// readOwner reads the record in f; an empty file is a zero Owner.
func readOwner(f *os.File) (Owner, error) {
	var o Owner
	b := make([]byte, 4096)
	n, err := f.ReadAt(b, 0)
	if n == 0 {
		return o, err
	}
	b = bytes.TrimSpace(b[:n])
	if len(b) == 0 {
		return o, nil
	}
	return o, json.Unmarshal(b, &o)
}

// ownerAlive reports whether o's process runs on this boot: same boot id,
// its pid present, with the recorded start time when there is one.
func ownerAlive(o Owner, procRoot string) bool {
	if o.BootID == "" || o.BootID != bootID(procRoot) {
		return false
	}
	st, err := startTicks(procRoot, o.PID)
	if err != nil {
		return false
	}
	return o.StartTicks == 0 || st == o.StartTicks
}

// bootID is the kernel's boot id, "" when it cannot be read.
func bootID(procRoot string) string {
	b, err := os.ReadFile(filepath.Join(procRoot, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startTicks reads a process's start time (clock ticks after boot) from
// <proc>/<pid>/stat; an error means no such process.
func startTicks(procRoot string, pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	f, err := procfs.StatField(b, 22) // starttime
	if err != nil {
		return 0, fmt.Errorf("cgroup: stat of pid %d: %w", pid, err)
	}
	return strconv.ParseUint(f, 10, 64)
}
