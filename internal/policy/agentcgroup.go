package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// AgentCgroup defaults.
const (
	// DefaultHighFraction is the share of profiled actions AgentCgroup
	// classes High (the top 20% by peak).
	DefaultHighFraction = 0.2
	// DefaultLowLimit is the paper's Low threshold (400 MB, seed 000
	// Appendix C); the default is this or budget/8, whichever is smaller.
	DefaultLowLimit = 400 * units.MiB
	// DefaultThrottlePoll is how often the v1 emulation reads usage.
	DefaultThrottlePoll = 20 * time.Millisecond
	// DefaultThrottleQuota and DefaultThrottlePeriod are the CPU the v1
	// emulation leaves a sandbox while it is over the threshold (2% of a CPU).
	DefaultThrottleQuota  = 2 * time.Millisecond
	DefaultThrottlePeriod = 100 * time.Millisecond
)

// AgentCgroupConfig configures the AgentCgroup baseline.
type AgentCgroupConfig struct {
	// HighFraction of the profiled actions, those with the largest peaks,
	// are High; the rest are Low. It must lie in [0, 1].
	HighFraction float64
	// LowLimit is the Low threshold in bytes; 0 means
	// min(DefaultLowLimit, budget/8).
	LowLimit int64
	// Poll, ThrottleQuota and ThrottlePeriod tune the v1 emulation; zero
	// values take the defaults above.
	Poll, ThrottleQuota, ThrottlePeriod time.Duration
	// ProcRoot is where Start detects the cgroup layout; "" means /proc.
	ProcRoot string
}

// AgentCgroup is the AgentCgroup baseline of seed 000 §5.1 (as analysed
// in its Appendix C): every tool call is classed High or Low from
// pre-execution profiling, High calls run unbounded and Low calls run
// under a fixed memory threshold on the sandbox's cgroup, set before the
// call is dispatched and lifted when it returns.
//
// The class comes from a peak threshold computed once at construction:
// over every action of the profiled workflows (Action.PeakMiB, the larger
// of the profile's and the recorded peak) the HighFraction largest are
// High, and at run time an action is High when its own profiled peak is at
// least the smallest High peak (ties at the threshold are High). With no
// profiled actions every action is Low.
//
// Enforcement, cgroup v2: memory.high of the sandbox's group is written
// directly (the limit during a Low call, "max" after).
//
// Enforcement, cgroup v1, which has no memory.high: an emulation in user
// space. While a Low call runs, a loop reads the group's working set
// (usage minus inactive file pages, i.e. what reclaim at memory.high could
// not drop) every Poll; while it is above the threshold the group's CFS
// quota is cut to ThrottleQuota per ThrottlePeriod, and restored when it
// falls back or the call ends. This is the closest v1 analogue: memory.high
// never kills, it throttles the offending tasks (reclaim plus penalty
// sleeps of up to 2 s per return to user space) so a call that needs more
// than the threshold creeps along instead of failing, which is the stall
// Appendix C reports. The alternatives are further off:
// memory.soft_limit_in_bytes acts only under global pressure and never
// slows the offender, and memory.limit_in_bytes with no swap OOM-kills the
// call, a failure mode AgentCgroup explicitly avoids. The emulation is
// coarser than the kernel's (it reacts within Poll, and cannot reclaim
// page cache itself).
//
// When a sandbox has no real cgroup (the fake backend, whose CgroupPath
// names no group, or a host without a memory hierarchy) the policy
// classifies but enforces nothing, and logs that once.
type AgentCgroup struct {
	controller.Nop
	cfg       AgentCgroupConfig
	budget    int64
	threshold float64 // MiB: an action is High when its PeakMiB >= threshold
	logger    *slog.Logger

	// detect, open and writeFile are the kernel entry points; tests replace them.
	detect    func(procRoot string) (*cgroup.Layout, error)
	open      func(l *cgroup.Layout, path string) (cgroup.Group, error)
	writeFile func(path, value string) error

	mu        sync.Mutex
	clock     controller.Clock
	layout    *cgroup.Layout
	limit     int64                 // effective Low threshold in bytes
	sandboxes map[string]memLimiter // sandbox id -> its enforcement
	degraded  sync.Once
	stats     AgentCgroupStats
}

// AgentCgroupStats counts what the policy did.
type AgentCgroupStats struct {
	High, Low int // actions granted per class
	Limited   int // Low actions whose sandbox had a limit applied
}

// memLimiter puts the Low threshold on one sandbox and takes it off.
type memLimiter interface {
	apply(limit int64) error
	lift() error
}

var _ controller.Policy = (*AgentCgroup)(nil)

// NewAgentCgroup builds the policy; workflows are the offline profile the
// High/Low threshold is computed from, budget (bytes, 0 for the one Start
// is given) scales the default Low threshold.
func NewAgentCgroup(cfg AgentCgroupConfig, budget int64, workflows []trajectory.Workflow, logger *slog.Logger) (*AgentCgroup, error) {
	if math.IsNaN(cfg.HighFraction) || cfg.HighFraction < 0 || cfg.HighFraction > 1 {
		return nil, fmt.Errorf("%w: agentcgroup high=%g: want a fraction in [0, 1]", ErrBadOption, cfg.HighFraction)
	}
	if cfg.LowLimit < 0 || budget < 0 {
		return nil, fmt.Errorf("%w: agentcgroup needs a non-negative low threshold and budget", ErrBadOption)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultThrottlePoll
	}
	if cfg.ThrottlePeriod <= 0 {
		cfg.ThrottlePeriod = DefaultThrottlePeriod
	}
	if cfg.ThrottleQuota <= 0 {
		cfg.ThrottleQuota = DefaultThrottleQuota
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &AgentCgroup{
		cfg:       cfg,
		budget:    budget,
		threshold: HighThreshold(workflows, cfg.HighFraction),
		logger:    logger,
		detect:    cgroup.Detect,
		open:      cgroup.Open,
		writeFile: writeControl,
		sandboxes: map[string]memLimiter{},
	}, nil
}

// HighThreshold returns the smallest peak (MiB) of the fraction of the
// workflows' actions with the largest peaks: round(fraction × n) actions of
// n, at least one when fraction > 0. It is +Inf when no action is High.
func HighThreshold(workflows []trajectory.Workflow, fraction float64) float64 {
	var peaks []float64
	for _, w := range workflows {
		for _, a := range w.Actions {
			peaks = append(peaks, a.PeakMiB())
		}
	}
	k := int(math.Round(fraction * float64(len(peaks))))
	if fraction > 0 && k == 0 && len(peaks) > 0 {
		k = 1
	}
	if k == 0 {
		return math.Inf(1)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(peaks)))
	return peaks[k-1]
}

// Name returns "agentcgroup".
func (*AgentCgroup) Name() string { return "agentcgroup" }

// Threshold is the High/Low peak threshold in MiB.
func (p *AgentCgroup) Threshold() float64 { return p.threshold }

// High reports whether act is classed High.
func (p *AgentCgroup) High(act *trajectory.Action) bool { return act.PeakMiB() >= p.threshold }

// LowLimit is the Low threshold in bytes once Start has run.
func (p *AgentCgroup) LowLimit() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limit
}

// Stats returns the counters.
func (p *AgentCgroup) Stats() AgentCgroupStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Start resolves the Low threshold and detects the cgroup layout; a host
// without one degrades the policy to classification only.
func (p *AgentCgroup) Start(ctx context.Context, env controller.Env) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if env.Budget > 0 {
		p.budget = env.Budget
	}
	if env.Logger != nil {
		p.logger = env.Logger
	}
	p.clock = env.Clock
	if p.clock == nil {
		p.clock = controller.RealClock{}
	}
	p.limit = p.cfg.LowLimit
	if p.limit == 0 {
		p.limit = DefaultLowLimit
		if p.budget > 0 {
			p.limit = min(p.limit, p.budget/8)
		}
	}
	l, err := p.detect(p.cfg.ProcRoot)
	if err != nil {
		p.degrade("no cgroup layout", err)
	}
	p.layout = l
	return ctx.Err()
}

// degrade logs, once, that limits are not enforced.
func (p *AgentCgroup) degrade(why string, err error) {
	p.degraded.Do(func() {
		p.logger.Warn("agentcgroup: not enforcing the Low threshold (classification only)", "why", why, "err", err)
	})
}

// SandboxUp opens the sandbox's cgroup and prepares its enforcement.
func (p *AgentCgroup) SandboxUp(_ *controller.Agent, info sandbox.Info) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.layout == nil || info.CgroupPath == "" {
		p.degrade("sandbox has no cgroup", nil)
		return
	}
	g, err := p.open(p.layout, info.CgroupPath)
	if err != nil {
		p.degrade("opening the sandbox cgroup", err)
		return
	}
	lim, err := p.limiterFor(g)
	if err != nil {
		p.degrade("sandbox cgroup lacks the memory controller", err)
		return
	}
	p.sandboxes[info.ID] = lim
}

// limiterFor picks memory.high on v2 and the emulation on v1.
func (p *AgentCgroup) limiterFor(g cgroup.Group) (memLimiter, error) {
	m, ok := p.layout.Controller(cgroup.Memory)
	if !ok {
		return nil, cgroup.ErrNoMemoryController
	}
	if m.Version == cgroup.V2 {
		dirs, err := p.layout.Dirs(g.Path())
		if err != nil {
			return nil, err
		}
		return &memHigh{file: dirs[cgroup.Memory] + "/memory.high", write: p.writeFile}, nil
	}
	return &highEmulator{g: g, clock: p.clock, poll: p.cfg.Poll, quota: p.cfg.ThrottleQuota, period: p.cfg.ThrottlePeriod, logger: p.logger}, nil
}

// SandboxDown forgets the sandbox, stopping any enforcement still running.
func (p *AgentCgroup) SandboxDown(_ *controller.Agent, id string) {
	p.mu.Lock()
	lim := p.sandboxes[id]
	delete(p.sandboxes, id)
	p.mu.Unlock()
	if e, ok := lim.(*highEmulator); ok {
		e.stop() // the group is gone: stop polling without touching it
	}
}

// agToken is what a Low grant carries to ActionDone.
type agToken struct{ lim memLimiter }

// ActionReady classes the action and, when it is Low, puts the threshold
// on the agent's sandbox before dispatch. It never blocks.
func (p *AgentCgroup) ActionReady(ctx context.Context, a *controller.Agent, act *trajectory.Action) (controller.Grant, error) {
	if err := ctx.Err(); err != nil {
		return controller.Grant{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.High(act) {
		p.stats.High++
		return controller.Grant{Heavy: true}, nil
	}
	p.stats.Low++
	lim := p.sandboxes[a.SandboxID]
	if lim == nil {
		return controller.Grant{}, nil
	}
	if err := lim.apply(p.limit); err != nil {
		p.logger.Warn("agentcgroup: applying the Low threshold", "agent", a.ID, "sandbox", a.SandboxID, "err", err)
		return controller.Grant{}, nil
	}
	p.stats.Limited++
	return controller.Grant{Token: agToken{lim}}, nil
}

// ActionDone lifts the threshold a Low grant applied.
func (p *AgentCgroup) ActionDone(a *controller.Agent, g controller.Grant, _ controller.Outcome) {
	tok, ok := g.Token.(agToken)
	if !ok {
		return
	}
	if err := tok.lim.lift(); err != nil {
		p.logger.Warn("agentcgroup: lifting the Low threshold", "agent", a.ID, "err", err)
	}
}

// Stop lifts every threshold still applied.
func (p *AgentCgroup) Stop(context.Context) error {
	p.mu.Lock()
	lims := make([]memLimiter, 0, len(p.sandboxes))
	for _, l := range p.sandboxes {
		lims = append(lims, l)
	}
	p.mu.Unlock()
	var errs []error
	for _, l := range lims {
		errs = append(errs, l.lift())
	}
	return errors.Join(errs...)
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
	clock         controller.Clock
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

func init() {
	Register(Entry{
		Name: "agentcgroup",
		Help: "AgentCgroup-like: top high=0.2 of profiled actions unbounded, the rest under memory.high low=min(400MiB,budget/8) (emulated on cgroup v1)",
		New: func(_ string, opts Options) (controller.Policy, error) {
			cfg := AgentCgroupConfig{HighFraction: DefaultHighFraction}
			for k, v := range opts.Params {
				switch k {
				case "high":
					f, err := strconv.ParseFloat(v, 64)
					if err != nil || f < 0 || f > 1 {
						return nil, fmt.Errorf("%w: high=%q: want a fraction in [0, 1]", ErrBadOption, v)
					}
					cfg.HighFraction = f
				case "low":
					n, err := units.ParseSize(v)
					if err != nil || n <= 0 {
						return nil, fmt.Errorf("%w: low=%q: want a positive size such as 400MiB", ErrBadOption, v)
					}
					cfg.LowLimit = n
				default:
					return nil, fmt.Errorf("%w: unknown parameter %q (agentcgroup takes high=, low=)", ErrBadOption, k)
				}
			}
			return NewAgentCgroup(cfg, opts.Budget, opts.Workflows, opts.Logger)
		},
	})
}
