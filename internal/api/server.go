package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Server is the tenon daemon. Create it with New, serve listeners with
// Serve, stop it with Shutdown.
type Server struct {
	cfg   Config
	log   *slog.Logger
	reg   *registry
	mgr   controller.Sandboxes
	step  *controller.Step // runs each action through the policy
	live  controller.LiveSet
	hub   *hub
	met   *metrics
	waits *waitLearner // learned model-wait lengths per agent
	// waitsSaved is closed when the periodic saveWaits has stopped
	// (Shutdown then saves once more).
	waitsSaved chan struct{}
	http       *http.Server
	start      time.Time
	boot       string // random nonce making sandbox ids unique across restarts

	mu     sync.Mutex
	agents map[string]*agent

	seq      atomic.Uint64
	draining atomic.Bool
	closing  chan struct{} // closed when Shutdown begins: ends event streams
	drainCtx context.Context
	drain    context.CancelFunc // cancels queued (not yet running) actions

	charge        atomic.Int64 // admitted charge outstanding
	queuedAgents  atomic.Int64
	queuedActions atomic.Int64
	running       atomic.Int64
	usageAt       atomic.Int64 // unix ns of the cached domain usage
	usageVal      atomic.Int64
	bodies        bodyGate // the large request bodies in flight (bodies.go)
}

// New opens the registry under cfg.StateDir, starts the policy and
// recovers every agent of an earlier run (their sandboxes are created on
// their next action).
func New(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "workspaces"), 0o700); err != nil {
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	reg, err := openRegistry(filepath.Join(cfg.StateDir, "agents.db"))
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, reg: reg, hub: newHub(), waits: newWaitLearner(), start: cfg.Clock.Now(),
		boot: nonce(), agents: make(map[string]*agent), closing: make(chan struct{}), waitsSaved: make(chan struct{}),
	}
	s.bodies.size = cfg.BodyMemory
	s.drainCtx, s.drain = context.WithCancel(context.Background())
	s.met = newMetrics(s)
	env := controller.Env{
		Clock: cfg.Clock, Budget: cfg.Budget, Domain: cfg.Domain, Backend: cfg.Backend,
		Live: s.live.List, Emit: s.emit, Logger: cfg.Logger.With("policy", cfg.Policy.Name()),
	}
	if err := cfg.Policy.Start(ctx, env); err != nil {
		reg.close()
		return nil, fmt.Errorf("starting policy %s: %w", cfg.Policy.Name(), err)
	}
	host := controller.SandboxHost{Backend: cfg.Backend, Spec: s.spec, Up: s.sandboxUp, Down: s.sandboxDown}
	if p, ok := cfg.Policy.(controller.SandboxManagerProvider); ok {
		s.mgr = p.SandboxManager(host)
	} else {
		s.mgr = controller.NewResident(host)
	}
	if !keepsWorkspaces(s.mgr) && cfg.WorkspaceMax > 0 {
		// This residency manager removes, parks (renames) and restores
		// workspace directories, which a mount point refuses (EBUSY, EXDEV).
		s.log.Warn("agent workspaces are not size-limited: the policy's residency manager moves them", "policy", cfg.Policy.Name())
		s.cfg.WorkspaceMax = 0
	}
	s.step = &controller.Step{
		Policy: cfg.Policy, Sandboxes: s.mgr, Backend: cfg.Backend, Live: &s.live, Clock: cfg.Clock, Logger: s.log,
		Emit: func(_ *controller.Agent, e controller.Event) { s.emit(e) },
		// A deleted agent's or cancelled request's killed action is
		// reported like any other failed one.
		ReportCancelled: true,
	}
	recs, err := reg.list()
	if err != nil {
		_ = cfg.Policy.Stop(ctx)
		reg.close()
		return nil, err
	}
	for _, rec := range recs {
		if err := s.remountWorkspace(rec.ID); err != nil {
			s.log.Warn("mounting a recovered agent's workspace", "agent", rec.ID, "err", err)
		}
		s.addAgent(rec, false)
	}
	if len(recs) > 0 {
		s.log.Info("recovered agents", "count", len(recs))
	}
	stored, err := reg.waits()
	if err != nil {
		s.log.Warn("learned model waits not loaded: learning them again", "err", err)
	} else if len(stored) > 0 {
		s.waits.load(stored)
		_, all := stored[allWaitsKey]
		s.log.Info("learned model waits loaded", "agents", len(stored), "over_all_agents", all)
	}
	go s.every(max(s.cfg.SlotIdle/4, 10*time.Millisecond), func() { s.reclaimSlots() })
	go func() {
		defer close(s.waitsSaved)
		s.every(waitSaveEvery, s.saveWaits)
	}()
	s.http = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if _, unix := c.LocalAddr().(*net.UnixAddr); !unix {
				ctx = context.WithValue(ctx, needAuthKey{}, true)
			}
			return ctx
		},
	}
	return s, nil
}

// every runs f every d until Shutdown begins.
func (s *Server) every(d time.Duration, f func()) {
	tick, stop := s.cfg.Clock.NewTicker(d)
	defer stop()
	for {
		select {
		case <-s.closing:
			return
		case <-tick:
			f()
		}
	}
}

// needAuthKey marks requests that arrived over TCP.
type needAuthKey struct{}

// Serve accepts connections on ln until Shutdown. A TCP listener is
// refused when no Token is configured.
func (s *Server) Serve(ln net.Listener) error {
	if _, unix := ln.Addr().(*net.UnixAddr); !unix && s.cfg.Token == "" {
		return ErrNoToken
	}
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests, waits for running actions until ctx
// is done, then releases every sandbox and stops the policy. Agents stay
// in the registry for the next start.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.draining.CompareAndSwap(false, true) {
		return nil
	}
	close(s.closing)
	s.drain()
	var errs []error
	if err := s.http.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("draining requests: %w", err))
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	s.mu.Lock()
	ags := make([]*agent, 0, len(s.agents))
	for _, ag := range s.agents {
		ags = append(ags, ag)
	}
	s.mu.Unlock()
	for _, ag := range ags {
		if err := s.retire(rctx, ag); err != nil {
			errs = append(errs, err)
		}
		if err := s.unmountWorkspace(ag.rec.ID); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.cfg.Policy.Stop(rctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping policy: %w", err))
	}
	<-s.waitsSaved
	s.saveWaits()
	if err := s.reg.close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// spec describes a fresh sandbox for agent a.
func (s *Server) spec(a *controller.Agent) sandbox.Spec {
	ag := s.lookup(a.ID)
	n := s.seq.Add(1)
	sp := sandbox.Spec{ID: fmt.Sprintf("tn-%s-%s-%d", s.boot, a.ID, n), Image: a.Workflow.Image, Workspace: a.Workspace}
	if ag != nil {
		sp.Env = ag.rec.Env
		sp.Labels = map[string]string{"tenon.agent": a.ID}
		for k, v := range ag.rec.Labels {
			sp.Labels[k] = v
		}
	}
	return sp
}

func (s *Server) sandboxUp(a *controller.Agent, info sandbox.Info) {
	s.live.Add(a, info)
	if ag := s.lookup(a.ID); ag != nil {
		ag.mu.Lock()
		if ag.created > 0 {
			s.met.remat.Inc()
		}
		ag.created++
		ag.sandbox = info.ID
		ag.mu.Unlock()
	}
	s.emit(controller.Event{Kind: controller.EventSandboxCreate, Workflow: a.ID, Sandbox: info.ID})
	s.cfg.Policy.SandboxUp(a, info)
}

func (s *Server) sandboxDown(a *controller.Agent, id string) {
	s.live.Remove(id)
	if ag := s.lookup(a.ID); ag != nil {
		ag.mu.Lock()
		if ag.sandbox == id {
			ag.sandbox = ""
		}
		ag.mu.Unlock()
	}
	s.emit(controller.Event{Kind: controller.EventSandboxDestroy, Workflow: a.ID, Sandbox: id})
	s.cfg.Policy.SandboxDown(a, id)
}

// emit stamps an event and sends it to subscribers and the metrics.
func (s *Server) emit(e controller.Event) {
	if e.T == 0 {
		e.T = s.cfg.Clock.Now().Sub(s.start).Seconds()
	}
	if e.MemBytes == 0 {
		e.MemBytes = s.usage()
	}
	s.met.observe(e)
	s.hub.publish(e)
}

// usageTTL is how long a domain usage reading stamps events before it is
// read again: events come in bursts of five per action, and reading the
// cgroup for each costs more than the rest of the request.
const usageTTL = 50 * time.Millisecond

// usage returns the domain's memory usage, read at most every usageTTL.
func (s *Server) usage() int64 {
	if s.cfg.Domain == nil {
		return 0
	}
	now := s.cfg.Clock.Now().UnixNano()
	if now-s.usageAt.Load() < int64(usageTTL) {
		return s.usageVal.Load()
	}
	u, err := s.cfg.Domain.Usage()
	if err != nil {
		return s.usageVal.Load()
	}
	s.usageVal.Store(u)
	s.usageAt.Store(now)
	return u
}

func (s *Server) lookup(id string) *agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[id]
}

// sortedAgents returns the agents in id order.
func (s *Server) sortedAgents() []*agent {
	s.mu.Lock()
	out := make([]*agent, 0, len(s.agents))
	for _, ag := range s.agents {
		out = append(out, ag)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].rec.ID < out[j].rec.ID })
	return out
}

// imageHolder is the image store holder key of an agent.
func imageHolder(id string) string { return "agent " + id }

// TaskLabel is the agent label that names its task: agents of one task
// (replicas, or rollouts of one problem) run the same tools on the same
// tree, so an action that grew far past its prediction in one makes the
// same command at the same place in the others reserve what it grew
// (policy.TaskReserve). Without it each agent is its own task.
const TaskLabel = "task"

// addAgent registers an agent in memory. A new agent (ask) asks for its
// admission slot at once; a recovered one at its first action (slots.go).
func (s *Server) addAgent(rec record, ask bool) *agent {
	ctx, cancel := context.WithCancel(context.Background())
	ag := &agent{
		rec: rec, ctx: ctx, cancel: cancel, exec: make(chan struct{}, 1),
		workspace: s.workspaceDir(rec.ID),
	}
	ag.a = &controller.Agent{
		ID: rec.ID, Workflow: &trajectory.Workflow{Version: trajectory.Version, ID: rec.ID, Image: rec.Image, Task: rec.Labels[TaskLabel]},
		Attempt: 1, Submitted: rec.Created, Workspace: ag.workspace,
	}
	s.mu.Lock()
	s.agents[rec.ID] = ag
	s.mu.Unlock()
	// The agent holds its image until it is deleted: between two
	// sandboxes (a teardown) none holds it.
	if ir, ok := s.cfg.Backend.(sandbox.ImageResolver); ok {
		if err := ir.HoldImage(imageHolder(rec.ID), rec.Image); err != nil {
			s.log.Warn("holding the agent's image", "agent", rec.ID, "image", rec.Image, "err", err)
		}
	}
	if ask {
		s.requestSlot(ag)
	}
	return ag
}

// retire ends an agent's attempt: cancels its slot request and running
// action, destroys its sandbox and gives its slot back.
func (s *Server) retire(ctx context.Context, ag *agent) error {
	ag.cancel()
	ag.mu.Lock()
	req := ag.req
	ag.mu.Unlock()
	if req != nil {
		<-req.done
	}
	select {
	case ag.exec <- struct{}{}: // wait for a running action to stop
	case <-ctx.Done():
		return fmt.Errorf("retiring agent %s: %w", ag.rec.ID, ctx.Err())
	}
	defer func() { <-ag.exec }()
	if ag.retired {
		return nil
	}
	ag.retired = true
	ag.mu.Lock()
	started := ag.started
	ag.mu.Unlock()
	if !started {
		return nil // never admitted: nothing to release
	}
	err := s.mgr.Release(ctx, ag.a)
	s.releaseSlot(ag)
	if err != nil {
		return fmt.Errorf("retiring agent %s: %w", ag.rec.ID, err)
	}
	return nil
}

func (s *Server) workspaceDir(id string) string {
	return filepath.Join(s.cfg.StateDir, "workspaces", id)
}

func nonce() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newAgentID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "ag-" + hex.EncodeToString(b[:])
}
