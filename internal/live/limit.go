package live

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Limiter puts memory.high limits on sandboxes for AgentCgroup's Low
// actions and takes them off.
type Limiter interface {
	// Add prepares the sandbox's limit (its cgroup is opened here).
	Add(info sandbox.Info)
	// Remove forgets a sandbox that is gone, touching nothing.
	Remove(id string)
	// Apply puts limit bytes on the sandbox; Lift takes it off.
	Apply(id string, limit int64) error
	Lift(id string) error
	// Close ends what is still running (none of the limits are lifted).
	Close()
}

// Emulation of memory.high on cgroup v1: while a Low action runs, the
// group's working set is read every poll and its CPU quota cut to quota
// per period while it is over the limit.
const (
	DefaultThrottlePoll   = 20 * time.Millisecond
	DefaultThrottleQuota  = 2 * time.Millisecond
	DefaultThrottlePeriod = 100 * time.Millisecond
)

// CgroupLimiter enforces limits through the sandboxes' cgroups: cgroup v2
// memory.high written directly, and on cgroup v1, which has no
// memory.high, an emulation in user space. memory.high never kills; it
// throttles the offending tasks (reclaim plus penalty sleeps) so a call
// that needs more than the threshold creeps along instead of failing,
// which is the stall seed 000 Appendix C reports. The v1 alternatives are
// further off: memory.soft_limit_in_bytes acts only under global pressure
// and never slows the offender, and memory.limit_in_bytes with no swap
// OOM-kills the call. The emulation is coarser than the kernel's (it
// reacts within a poll, and cannot reclaim page cache itself).
//
// A sandbox without a real cgroup (the fake backend, a host without a
// memory hierarchy) gets no limit; that is logged once.
type CgroupLimiter struct {
	Layout *cgroup.Layout // nil: nothing is enforced
	Clock  clock.Clock
	Logger *slog.Logger
	// Poll, Quota and Period tune the v1 emulation (zero: the defaults).
	Poll, Quota, Period time.Duration
	// Open and WriteFile are the kernel entry points; tests replace them.
	Open      func(l *cgroup.Layout, path string) (cgroup.Group, error)
	WriteFile func(path, value string) error

	mu       sync.Mutex
	m        map[string]memLimiter
	degraded sync.Once
}

// detectLimiter returns a CgroupLimiter for this host's cgroup layout.
func detectLimiter(clk clock.Clock, log *slog.Logger) *CgroupLimiter {
	l := &CgroupLimiter{Clock: clk, Logger: log}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		l.degrade("no cgroup layout", err)
	}
	l.Layout = layout
	return l
}

func (l *CgroupLimiter) degrade(why string, err error) {
	l.degraded.Do(func() {
		if l.Logger != nil {
			l.Logger.Warn("agentcgroup: not enforcing the Low threshold (classification only)", "why", why, "err", err)
		}
	})
}

// Add opens the sandbox's cgroup and picks memory.high or the emulation.
func (l *CgroupLimiter) Add(info sandbox.Info) {
	if l.Layout == nil || info.CgroupPath == "" {
		l.degrade("sandbox has no cgroup", nil)
		return
	}
	open := l.Open
	if open == nil {
		open = cgroup.Open
	}
	g, err := open(l.Layout, info.CgroupPath)
	if err != nil {
		l.degrade("opening the sandbox cgroup", err)
		return
	}
	lim, err := l.limiterFor(g)
	if err != nil {
		l.degrade("sandbox cgroup lacks the memory controller", err)
		return
	}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]memLimiter{}
	}
	l.m[info.ID] = lim
	l.mu.Unlock()
}

func (l *CgroupLimiter) limiterFor(g cgroup.Group) (memLimiter, error) {
	m, ok := l.Layout.Controller(cgroup.Memory)
	if !ok {
		return nil, cgroup.ErrNoMemoryController
	}
	if m.Version == cgroup.V2 {
		dirs, err := l.Layout.Dirs(g.Path())
		if err != nil {
			return nil, err
		}
		write := l.WriteFile
		if write == nil {
			write = writeControl
		}
		return &memHigh{file: dirs[cgroup.Memory] + "/memory.high", write: write}, nil
	}
	clk := l.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	log := l.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &highEmulator{g: g, clock: clk, poll: l.Poll, quota: l.Quota, period: l.Period, logger: log}
	if e.poll <= 0 {
		e.poll = DefaultThrottlePoll
	}
	if e.quota <= 0 {
		e.quota = DefaultThrottleQuota
	}
	if e.period <= 0 {
		e.period = DefaultThrottlePeriod
	}
	return e, nil
}

func (l *CgroupLimiter) get(id string) memLimiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[id]
}

// Remove stops the emulation of a sandbox that is gone without touching its group.
func (l *CgroupLimiter) Remove(id string) {
	l.mu.Lock()
	lim := l.m[id]
	delete(l.m, id)
	l.mu.Unlock()
	if e, ok := lim.(*highEmulator); ok {
		e.stop()
	}
}

// ErrNoLimiter means the sandbox has no cgroup to limit.
var ErrNoLimiter = errors.New("live: sandbox has no memory limiter")

// Apply puts limit on sandbox id.
func (l *CgroupLimiter) Apply(id string, limit int64) error {
	lim := l.get(id)
	if lim == nil {
		return ErrNoLimiter
	}
	return lim.apply(limit)
}

// Lift takes sandbox id's limit off (nothing when it has none).
func (l *CgroupLimiter) Lift(id string) error {
	if lim := l.get(id); lim != nil {
		return lim.lift()
	}
	return nil
}

// Close stops every emulation loop.
func (l *CgroupLimiter) Close() {
	l.mu.Lock()
	lims := make([]memLimiter, 0, len(l.m))
	for _, lim := range l.m {
		lims = append(lims, lim)
	}
	l.mu.Unlock()
	for _, lim := range lims {
		if e, ok := lim.(*highEmulator); ok {
			e.stop()
		}
	}
}

// memLimiter puts the Low threshold on one sandbox and takes it off.
type memLimiter interface {
	apply(limit int64) error
	lift() error
}

// memHigh enforces the threshold with cgroup v2 memory.high.
type memHigh struct {
	file  string
	write func(path, value string) error
}

func (m *memHigh) apply(limit int64) error {
	if err := m.write(m.file, strconv.FormatInt(limit, 10)); err != nil {
		return fmt.Errorf("setting %s: %w", m.file, err)
	}
	return nil
}

func (m *memHigh) lift() error {
	if err := m.write(m.file, "max"); err != nil {
		return fmt.Errorf("lifting %s: %w", m.file, err)
	}
	return nil
}

// highEmulator emulates memory.high on cgroup v1 (see AgentCgroup): while
// applied, it polls the working set and cuts the CPU quota while it is over
// the limit.
type highEmulator struct {
	g             cgroup.Group
	clock         clock.Clock
	poll          time.Duration
	quota, period time.Duration
	logger        *slog.Logger

	mu        sync.Mutex
	cancel    chan struct{} // closed to stop the loop; nil when not applied
	done      chan struct{} // closed when the loop has exited
	throttled bool
	throttles int // times the quota was cut
}

func (e *highEmulator) apply(limit int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancel != nil {
		return nil // already applied
	}
	e.cancel, e.done = make(chan struct{}), make(chan struct{})
	go e.loop(limit, e.cancel, e.done)
	return nil
}

// loop checks the working set now and every poll until cancel closes.
func (e *highEmulator) loop(limit int64, cancel, done chan struct{}) {
	defer close(done)
	for {
		if err := e.check(limit); err != nil {
			e.logger.Debug("agentcgroup: emulated memory.high stops", "group", e.g.Path(), "err", err)
			return
		}
		select {
		case <-cancel:
			return
		case <-e.clock.After(e.poll):
		}
	}
}

// check throttles or releases the group by its working set.
func (e *highEmulator) check(limit int64) error {
	s, err := e.g.Memory()
	if err != nil {
		return err
	}
	over := s.WorkingSet > limit
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case over && !e.throttled:
		if err := e.g.SetCPUQuota(e.quota, e.period); err != nil {
			return err
		}
		e.throttled = true
		e.throttles++
	case !over && e.throttled:
		if err := e.g.SetCPUQuota(0, 0); err != nil {
			return err
		}
		e.throttled = false
	}
	return nil
}

// stop ends the loop and reports whether the quota is still cut.
func (e *highEmulator) stop() (throttled bool) {
	e.mu.Lock()
	cancel, done := e.cancel, e.done
	e.cancel, e.done = nil, nil
	e.mu.Unlock()
	if cancel == nil {
		return false
	}
	close(cancel)
	<-done
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.throttled
}

func (e *highEmulator) lift() error {
	if !e.stop() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.g.SetCPUQuota(0, 0); err != nil {
		return fmt.Errorf("lifting the cpu quota of %s: %w", e.g.Path(), err)
	}
	e.throttled = false
	return nil
}

// writeControl writes one value to an existing control file.
func writeControl(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(value)
	return errors.Join(werr, f.Close())
}
