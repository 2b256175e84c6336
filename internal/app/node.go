package app

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/kube"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/node"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/sandbox/adopted"
	"github.com/tenon-dev/tenon/internal/units"
)

// NodeConfig is `tenon node`: the node agent over a container runtime's NRI.
type NodeConfig struct {
	NRISocket string // the runtime's NRI socket
	Domain    string // the workload domain's cgroup name
	Budget    int64  // the node's memory budget for agent pods
	// Policy is gate (the default) or a policy with the gate, admission
	// and residency (tenon, its ablations with the gate): admission and
	// pacing act on the agents whose harness talks to the harness API,
	// residency suspends Sandboxes through Kube.
	Policy string
	// StateDir keeps the predictor's measurements and models (policies
	// with admission need it).
	StateDir string
	// Kube, when set, reaches the API server: the node's agent slots are
	// published (policies with admission) and idle agents' Sandboxes
	// suspended and resumed (policies with residency). nil: neither.
	Kube *kube.Config
	// NodeName is the node's name (required with Kube).
	NodeName string
	// KubePoll is how often the slots are read for publication (0: 1 s).
	KubePoll time.Duration
	// Listen serves /metrics, /status (JSON per pod), /healthz (200 once
	// connected to the runtime), the harness API (node.HandleHarness) and
	// the resume route (kube.ResumePattern, with Kube and residency) on
	// this TCP address; "" for none.
	Listen string
	// Token, when set, is the bearer token the harness API and the resume
	// route require ("Authorization: Bearer T"); /metrics, /status and
	// /healthz stay open.
	Token string
	// Reporter also receives every per-pod report (the apiserver path);
	// nil: logs, metrics and /status only.
	Reporter node.Reporter
	// Connected, when set, is called each time the NRI connection is up
	// (tests).
	Connected func(*node.Node)
	Status    io.Writer // receives the line saying what runs; nil shows none
	Log       *slog.Logger
}

// nodePolicy checks that name is a policy the node can run: the gate
// (and its OOM hold) act on every adopted container; admission, agent
// pacing and residency on the agents whose harness talks to the node.
// Agent-level slots and reservations, and AgentCgroup's limits, have no
// node form.
func nodePolicy(name string) (policy.Spec, error) {
	sp, err := policy.ParseSpec(name)
	if err != nil {
		return sp, err
	}
	if !sp.Gate || sp.Reservation || sp.AgentCgroup || sp.StaticN > 0 {
		return sp, fmt.Errorf("tenon node runs the gate, alone (--policy gate) or with admission and residency (--policy tenon, or a tenon-* ablation that keeps the gate): %q is not one of them", name)
	}
	return sp, nil
}

// Node runs the node agent until ctx is done: it opens the shared
// workload domain, starts the policy over the adopted containers, serves
// the metrics and connects to the runtime's NRI. On the way out the
// policy thaws what it froze and disarms the OOM hold; the adopted
// containers run on, and the domain stays for the next start.
func Node(ctx context.Context, cfg NodeConfig) error {
	log := discardLog(cfg.Log)
	if cfg.Budget <= 0 {
		return errors.New("node: --budget must be positive: the memory agent pods may use on this node, e.g. --budget 48GiB")
	}
	sp, err := nodePolicy(cfg.Policy)
	if err != nil {
		return err
	}
	if sp.Admission && cfg.StateDir == "" {
		return fmt.Errorf("node: --policy %s predicts actions' memory and learns from them: pass --state-dir for its measurements and models", cfg.Policy)
	}
	if cfg.Kube != nil && cfg.NodeName == "" {
		return errors.New("node: talking to the API server needs the node's name: pass --node-name (in a DaemonSet: the downward API's spec.nodeName as $NODE_NAME)")
	}
	if err := cgroup.RequireRoot(); err != nil {
		return err
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return err
	}
	dom, err := cgroup.OpenSharedDomain(ctx, layout, cfg.Domain, cfg.Budget, log)
	if err != nil {
		return fmt.Errorf("opening workload domain %s: %w", cfg.Domain, err)
	}
	defer func() {
		if err := dom.Release(); err != nil {
			log.Warn("releasing the workload domain", "err", err)
		}
	}()
	// As for tenon's own sandboxes (openBackend): a budget overrun must
	// fail, not page out (v1: memory.swappiness 0, which the containers'
	// groups inherit; v2: the domain's memory.swap.max 0).
	if err := dom.DisableSwap(); err != nil {
		return err
	}
	be := adopted.New(layout)
	defer be.Close()
	p, lrn, err := learningPolicy(cfg.Policy, "", cfg.StateDir, cfg.Budget, nil, false, live.Options{Logger: log})
	if err != nil {
		return err
	}
	if lrn != nil {
		defer lrn.Close()
	}
	reg := prometheus.NewRegistry()
	cp, err := newNodeKube(cfg, sp, p, log)
	if err != nil {
		return err
	}
	cp.register(reg)
	liveSet := &controller.LiveSet{}
	n := node.New(node.Config{Domain: dom.Group().Path(), DomainHits: domainHits(dom), Backend: be, Policy: p,
		Live: liveSet, Reporter: cfg.Reporter, Metrics: reg, Log: log, Suspender: cp.suspender()})
	env := controller.Env{Clock: clock.Real{}, Budget: cfg.Budget, Domain: replay.CgroupDomain{Domain: dom},
		Backend: be, Live: liveSet.List, Emit: n.Emit, Logger: log}
	if err := p.Start(ctx, env); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		if err := p.Stop(sctx); err != nil {
			log.Warn("stopping the policy", "err", err)
		}
	}()
	var connected atomic.Bool
	stopHTTP, err := serveNode(cfg.Listen, cfg.Token, n, cp, reg, &connected, log)
	if err != nil {
		return err
	}
	defer stopHTTP()
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { n.WatchOOM(wctx) })
	cp.run(wctx, &wg)
	if cfg.Status != nil {
		fmt.Fprintf(cfg.Status, "tenon node: policy %s, domain %s, budget %s, NRI %s, agent pods annotated %s=true%s\n",
			p.Name(), dom.Group().Path(), units.FormatSize(cfg.Budget), cfg.NRISocket, node.AnnotationAgent, cp.describe())
	}
	return n.RunNRI(ctx, cfg.NRISocket, 2*time.Second, func(up bool) {
		connected.Store(up)
		if up && cfg.Connected != nil {
			cfg.Connected(n)
		}
	})
}

// domainHits reads the domain's limit hits.
func domainHits(dom *cgroup.Domain) func() (int64, error) {
	return func() (int64, error) {
		m, err := dom.Group().Memory()
		return m.LimitHits, err
	}
}

// requireToken passes requests with the bearer token to next and answers
// the others 401; an empty token lets every request through.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tenon-node"`)
			http.Error(w, `{"error": "node: this API needs the node agent's token: send \"Authorization: Bearer <token>\" (tenon node --token)"}`, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveNode serves the node's metrics, status and health on addr ("":
// nothing) and returns what stops it.
func serveNode(addr, token string, n *node.Node, cp *nodeKube, reg *prometheus.Registry, connected *atomic.Bool, log *slog.Logger) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("node: listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(n.Status())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !connected.Load() {
			http.Error(w, "not connected to the runtime's NRI yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	api := http.NewServeMux()
	n.HandleHarness(api)
	cp.handle(api)
	mux.Handle("/v1/", requireToken(token, api))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("node: metrics server", "err", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}
