package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
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
	Policy    string // a policy with the gate and nothing that needs actions (gate)
	// Listen serves /metrics, /status (JSON per pod) and /healthz (200
	// once connected to the runtime) on this TCP address; "" for none.
	Listen string
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
// (and its OOM hold) act on running containers; admission and residency
// act on actions and sandboxes tenon runs itself, which adopted
// containers are not.
func nodePolicy(name string) error {
	sp, err := policy.ParseSpec(name)
	if err != nil {
		return err
	}
	if !sp.Gate || sp.Admission || sp.Residency || sp.Reservation || sp.AgentCgroup {
		return fmt.Errorf("tenon node runs policies with the gate alone (--policy gate): %q needs actions or sandboxes tenon runs itself, which adopted containers are not", name)
	}
	return nil
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
	if err := nodePolicy(cfg.Policy); err != nil {
		return err
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
	p, err := live.Build(cfg.Policy, policy.Options{Budget: cfg.Budget}, live.Options{Logger: log})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	liveSet := &controller.LiveSet{}
	n := node.New(node.Config{Domain: dom.Group().Path(), DomainHits: domainHits(dom), Backend: be, Policy: p,
		Live: liveSet, Reporter: cfg.Reporter, Metrics: reg, Log: log})
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
	stopHTTP, err := serveNode(cfg.Listen, n, reg, &connected, log)
	if err != nil {
		return err
	}
	defer stopHTTP()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go n.WatchOOM(wctx)
	if cfg.Status != nil {
		fmt.Fprintf(cfg.Status, "tenon node: policy %s, domain %s, budget %s, NRI %s, agent pods annotated %s=true\n",
			p.Name(), dom.Group().Path(), units.FormatSize(cfg.Budget), cfg.NRISocket, node.AnnotationAgent)
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

// serveNode serves the node's metrics, status and health on addr ("":
// nothing) and returns what stops it.
func serveNode(addr string, n *node.Node, reg *prometheus.Registry, connected *atomic.Bool, log *slog.Logger) (func(), error) {
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("node: metrics server", "err", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}
