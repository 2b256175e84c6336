package residency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

// AgentInfo describes a logical agent to Ensure.
type AgentInfo struct {
	ID         string
	WorkflowID string
	Attempt    int
	NextAction int // index of the action about to run
	BaseImage  string
	Runtime    store.RuntimeConfig
}

// BoundaryInfo is what the controller knows at an action-done boundary.
type BoundaryInfo struct {
	ActionExited   bool
	ResultRecorded bool
	NextAction     int           // index of the next action
	PredictedWait  time.Duration // predicted model wait before it; 0 = unknown
	Pinned         string        // see Observation.Pinned
}

type agentState int

const (
	stateNew agentState = iota // known, never materialized
	stateResident
	stateAbsent
	stateReleased
)

// agent is the manager's view of one logical agent. mu is held across
// Ensure, teardown and Release: holding it blocks dispatch.
type agent struct {
	mu          sync.Mutex
	info        AgentInfo
	state       agentState
	sandbox     string
	busy        bool // an action is in flight (Ensure returned, Boundary not yet called)
	haveVerdict bool
	verdict     Verdict
	idleSince   time.Time
	wait        time.Duration
	workingSet  int64
	generation  uint64
	pending     bool // queued for teardown; guarded by Manager.mu
	// frees is what the queued reclaim is expected to free, counted in
	// Manager.inflight while pending; guarded by Manager.mu.
	frees int64
	// pagedOut: the resident sandbox is frozen with its memory paged out;
	// Ensure pages it in before the next action.
	pagedOut bool
	// thawDeferred: a page-in of the current page-out left the sandbox
	// frozen (ErrPageInIncomplete) and EventThawDeferred was emitted for
	// it; the retries emit none. Only set while pagedOut, and cleared
	// wherever pagedOut is.
	thawDeferred bool
	// thawRetry is when the gate's next UnstallSandbox may try the page-in
	// again after an incomplete one, thawBackoff the wait that set it
	// (stall.go); both cleared with thawDeferred.
	thawRetry   time.Time
	thawBackoff time.Duration
	// caches are the stat caches of the resident sandbox's writable layer
	// and workspace (by artifact name), from its last extraction or
	// capture, so the next capture reads only changed files. nil: none.
	caches map[string]*archive.StatCache
}

// Manager virtualizes the residency of many agents' sandboxes.
type Manager struct {
	cfg      Config
	host     Host
	st       *store.Store
	log      *slog.Logger
	blobDir  string
	stageDir string

	mu     sync.Mutex
	agents map[string]*agent
	// bySandboxID maps each agent's current sandbox to the agent, and
	// stalls each stalled agent (Stall, StallSandbox) to when it stalled;
	// both guarded by mu, so the gate's calls never wait for an agent's
	// lock (which Ensure may hold while it waits for pressure to ease).
	bySandboxID map[string]string // sandbox id -> agent id
	stalls      map[string]time.Time
	// inflight sums the expected frees of the queued reclaims (agent.frees);
	// guarded by mu.
	inflight int64
	// zombies are sandboxes whose destroy failed after their record was
	// committed; Tick retries destroying them.
	zombies []string

	lifecycle *slots       // LifecycleLimit slots for teardowns and rematerializations, reclaims first
	paging    *slots       // LifecycleLimit slots for page-outs and page-ins, reclaims first
	gcMu      sync.RWMutex // readers: capture..commit; writer: blob GC
	content   contentRefs  // guarded by gcMu
	tdCost    *ewma
	rmCost    *ewma
	// pager is the host's page-out capability; nil when it has none.
	pager Pager
	// pageInPerMiB is the measured (EWMA) page-in time per MiB.
	pageInPerMiB *ewma
	metrics      metrics

	bg     context.Context
	cancel context.CancelFunc
	// loopDone is closed when the tick loop (Config.TickEvery) ended.
	loopDone chan struct{}
	kicks    *kicker  // Boundary and WaitBegin ask the tick loop for a Tick
	work     inflight // background teardowns and rematerializations (Wait, Close)
}

// New returns a manager. Call Recover before first use when st may hold
// state from an earlier run.
func New(cfg Config, host Host, st *store.Store, log *slog.Logger) (*Manager, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("residency: Config.StateDir is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.defaults()
	m := &Manager{
		cfg: cfg, host: host, st: st, log: log,
		blobDir:      filepath.Join(cfg.StateDir, "blobs"),
		stageDir:     filepath.Join(cfg.StateDir, "staging"),
		agents:       map[string]*agent{},
		bySandboxID:  map[string]string{},
		stalls:       map[string]time.Time{},
		lifecycle:    newSlots(cfg.LifecycleLimit),
		paging:       newSlots(cfg.LifecycleLimit),
		kicks:        newKicker(),
		tdCost:       newEWMA(cfg.CostAlpha, cfg.TeardownCostPrior),
		rmCost:       newEWMA(cfg.CostAlpha, cfg.RematCostPrior),
		pageInPerMiB: newEWMA(cfg.CostAlpha, time.Second/(DefaultPageInRate>>20)),
	}
	if p, ok := host.(Pager); ok {
		m.pager = p
	}
	if m.cfg.Policy.PageOut && m.pager == nil {
		m.cfg.Policy.PageOut = false
		log.Info("residency: page-out tier skipped: the host cannot page out (no swap, or a backend without paging)")
	}
	for _, d := range []string{m.blobDir, m.stageDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	m.bg, m.cancel = context.WithCancel(context.Background())
	m.loopDone = make(chan struct{})
	if cfg.ManualReclaim {
		close(m.loopDone)
		m.kicks.close()
	} else {
		go m.tickLoop()
	}
	return m, nil
}

// Metrics returns a snapshot of the counters.
func (m *Manager) Metrics() Metrics { return m.metrics.get() }

// Costs returns the measured (EWMA) teardown and rematerialization costs.
func (m *Manager) Costs() (teardown, remat time.Duration) { return m.tdCost.get(), m.rmCost.get() }

// Wait blocks until the Ticks asked for so far ran and no background
// teardown or rematerialization runs.
func (m *Manager) Wait() {
	m.kicks.wait()
	m.work.Wait()
}

// Close stops background work and waits for it. Sandboxes are left as
// they are (resident ones stay; the registry describes them for Recover).
func (m *Manager) Close() error {
	m.cancel()
	<-m.loopDone
	m.work.Wait()
	return nil
}

func (m *Manager) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = m.cfg.Clock.Now()
	}
	if e.Err != nil {
		e.Error = e.Err.Error()
	}
	e.Metrics = m.metrics.get()
	if m.cfg.Sink != nil {
		m.cfg.Sink(e)
	}
}

// slotsFor is the pool of lifecycle slots an operation takes: paging for
// a page-out or a page-in, lifecycle for a teardown or a
// rematerialization. A page-out or page-in of an idle agent's floor takes
// a few tens of milliseconds, a teardown or rematerialization a few
// hundred (captures and restores of its files): in one pool of two slots
// a page-in that an agent's next action waited for queued behind
// teardowns (replaying batch18 twice live at 1 GiB, both slots were busy
// through nearly all of the 175 s that rematerializations and page-ins
// waited in a run, a page-in's wait 1.4 s at the median where it took
// 0.02 s). With a pool each (and policy.DefaultMinPageOut at 1 MiB),
// two runs against four: makespan 97.9-98.0 s against 96.4-99.3 s, P50
// 44.7-46.7 s against 47.0-50.0 s, a page-in's wait for its start 0.10-0.17
// s at the median against 0.26 s. The simulator takes no slot for paging
// at all.
func (m *Manager) slotsFor(paging bool) *slots {
	if paging {
		return m.paging
	}
	return m.lifecycle
}

func (m *Manager) lookup(id string) (*agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownAgent, id)
	}
	return a, nil
}

func (m *Manager) getOrAdd(info AgentInfo) *agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[info.ID]
	if !ok {
		a = &agent{info: info}
		m.agents[info.ID] = a
	}
	return a
}

// sortedAgents returns the agents in id order.
func (m *Manager) sortedAgents() []*agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.agents))
	for id := range m.agents { // the key: a.info is the agent's, under a.mu
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]*agent, len(ids))
	for i, id := range ids {
		out[i] = m.agents[id]
	}
	return out
}

// putAgent writes the registry entry of a (a.mu held).
func (m *Manager) putAgent(a *agent) error {
	e := store.Agent{
		ID: a.info.ID, WorkflowID: a.info.WorkflowID, SandboxID: a.sandbox,
		NextAction: a.info.NextAction, Attempt: a.info.Attempt, Generation: a.generation,
		UpdatedAt: m.cfg.Clock.Now(),
	}
	switch a.state {
	case stateResident:
		e.State = store.StateResident
	default:
		e.State = store.StateAbsent
	}
	return m.st.PutAgent(e)
}

// setSandbox sets the agent's current sandbox (a.mu held) and the index.
func (m *Manager) setSandbox(a *agent, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.sandbox != "" && m.bySandboxID[a.sandbox] == a.info.ID {
		delete(m.bySandboxID, a.sandbox)
	}
	a.sandbox = id
	if id != "" {
		m.bySandboxID[id] = a.info.ID
	}
}

// tickLoop runs Tick every TickEvery until Close.
func (m *Manager) tickLoop() {
	defer close(m.loopDone)
	defer m.kicks.close()
	for {
		select {
		case <-m.bg.Done():
			return
		case <-m.kicks.ch:
		case <-m.cfg.Clock.After(m.cfg.TickEvery):
		}
		g := m.kicks.begin()
		m.Tick()
		m.kicks.end(g)
	}
}
