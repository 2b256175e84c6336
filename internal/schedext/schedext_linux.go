//go:build linux && amd64

package schedext

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Paths of the kernel's sched_ext state; tests on a fake tree replace them.
var (
	statePath = "/sys/kernel/sched_ext/state"
	opsPath   = "/sys/kernel/sched_ext/root/ops"
)

// OpsName is the scheduler's name in /sys/kernel/sched_ext/root/ops.
const OpsName = "tenon_gate"

// Scheduler is the loaded gate scheduler. Its methods are safe for
// concurrent use.
type Scheduler struct {
	mu     sync.Mutex
	objs   gateObjects
	link   link.Link
	denied map[uint64]bool
	closed bool
}

// State reads the kernel's sched_ext state ("enabled", "disabled",
// "enabling", "disabling"); an error when the kernel has no sched_ext.
func State() (string, error) {
	b, err := os.ReadFile(statePath)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Supported reports whether this kernel has sched_ext with no scheduler
// loaded, without loading anything.
func Supported() error {
	st, err := State()
	if err != nil {
		return fmt.Errorf("%w: the kernel has no sched_ext (%v)", ErrUnavailable, err)
	}
	if st != "disabled" {
		ops, _ := os.ReadFile(opsPath)
		return fmt.Errorf("%w: sched_ext is %s (scheduler %q)", ErrUnavailable, st, strings.TrimSpace(string(ops)))
	}
	var fs unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &fs); err != nil || fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("%w: /sys/fs/cgroup is not cgroup v2 (the scheduler keys sandboxes by their v2 cgroup)", ErrUnavailable)
	}
	return nil
}

// Load loads the scheduler and attaches it: from here until Close (or the
// process's exit) every task in the system runs under it.
func Load(opts Options) (*Scheduler, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := Supported(); err != nil {
		return nil, err
	}
	spec, err := loadGate()
	if err != nil {
		return nil, fmt.Errorf("%w: parsing the BPF object: %v", ErrUnavailable, err)
	}
	for name, v := range map[string]time.Duration{
		"denied_slice_ns": opts.DeniedSlice, "shared_slice_ns": opts.SharedSlice,
		"max_wait_ns": opts.MaxWait, "kick_period_ns": opts.KickPeriod,
	} {
		if err := spec.Variables[name].Set(uint64(v)); err != nil {
			return nil, fmt.Errorf("schedext: setting %s: %w", name, err)
		}
	}
	s := &Scheduler{denied: map[uint64]bool{}}
	if err := spec.LoadAndAssign(&s.objs, nil); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("%w: the verifier refused the program: %+v", ErrUnavailable, ve)
		}
		return nil, fmt.Errorf("%w: loading the BPF object: %v", ErrUnavailable, err)
	}
	l, err := link.AttachStructOps(link.StructOpsOptions{Map: s.objs.GateOps})
	if err != nil {
		s.objs.Close()
		return nil, fmt.Errorf("%w: attaching the scheduler: %v (exit: %v)", ErrUnavailable, err, s.exitLocked())
	}
	s.link = l
	return s, nil
}

// Enabled reports whether the kernel runs this scheduler now: false after
// Close, or after the kernel unloaded it (see Exit).
func (s *Scheduler) Enabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	st, err := State()
	if err != nil || st != "enabled" {
		return false
	}
	ops, err := os.ReadFile(opsPath)
	return err != nil || strings.TrimSpace(string(ops)) == OpsName // no root/ops: older layout, trust the state
}

// Deny paces the tasks of the cgroup with id cgid (see CgroupID) and of its
// descendants at rate of one CPU. Denying a cgroup again changes its rate
// and restarts its pace.
func (s *Scheduler) Deny(cgid uint64, rate float64) error {
	r, err := ratePPM(rate)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if err := s.objs.Denied.Put(cgid, gateGateCg{RatePpm: r}); err != nil {
		return fmt.Errorf("schedext: denying cgroup %d: %w", cgid, err)
	}
	s.denied[cgid] = true
	return s.objs.NrDenied.Set(uint32(len(s.denied)))
}

// Allow stops pacing the cgroup; its queued tasks run at the next dispatch.
// Allowing a cgroup that is not denied does nothing.
func (s *Scheduler) Allow(cgid uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if err := s.objs.Denied.Delete(cgid); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("schedext: allowing cgroup %d: %w", cgid, err)
	}
	delete(s.denied, cgid)
	return s.objs.NrDenied.Set(uint32(len(s.denied)))
}

// Stats returns what the scheduler counted for a denied cgroup; false when
// it is not denied.
func (s *Scheduler) Stats(cgid uint64) (CgroupStats, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return CgroupStats{}, false, errClosed
	}
	var v gateGateCg
	if err := s.objs.Denied.Lookup(cgid, &v); err != nil {
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return CgroupStats{}, false, nil
		}
		return CgroupStats{}, false, err
	}
	return CgroupStats{Rate: float64(v.RatePpm) / ppm, Ran: time.Duration(v.RanNs), Runs: v.Runs}, true, nil
}

// Counters returns the scheduler's global counts.
func (s *Scheduler) Counters() (Counters, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Counters{}, errClosed
	}
	var c Counters
	for _, x := range []struct {
		v   *ebpf.Variable
		dst *uint64
	}{
		{s.objs.NrSharedDispatched, &c.SharedDispatched}, {s.objs.NrDeniedDispatched, &c.DeniedDispatched},
		{s.objs.NrReleased, &c.Released}, {s.objs.NrCapped, &c.Capped}, {s.objs.NrKicks, &c.Kicks},
	} {
		if err := x.v.Get(x.dst); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Exit says why the kernel unloaded the scheduler; the zero ExitInfo while
// it runs.
func (s *Scheduler) Exit() ExitInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ExitInfo{}
	}
	return s.exitLocked()
}

func (s *Scheduler) exitLocked() ExitInfo {
	var e ExitInfo
	if s.objs.ExitKind == nil {
		return e
	}
	_ = s.objs.ExitKind.Get(&e.Kind)
	_ = s.objs.ExitCode.Get(&e.Code)
	var reason [128]byte
	var msg [256]byte
	if s.objs.ExitReason.Get(&reason) == nil {
		e.Reason = cString(reason[:])
	}
	if s.objs.ExitMsg.Get(&msg) == nil {
		e.Msg = cString(msg[:])
	}
	return e
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Close detaches the scheduler and waits (up to 10 s) until the kernel is
// back on its default scheduler. It is idempotent.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.link.Close()
	if cerr := s.objs.Close(); err == nil {
		err = cerr
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, serr := State()
		if serr != nil || st == "disabled" {
			break
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("schedext: sched_ext still %s 10 s after detaching", st)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

var errClosed = errors.New("schedext: scheduler closed")

// CgroupID returns the id of the cgroup v2 directory dir (its inode
// number), the key Deny and Allow take.
func CgroupID(dir string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0, fmt.Errorf("schedext: cgroup id of %s: %w", dir, err)
	}
	return st.Ino, nil
}
