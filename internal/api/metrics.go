package api

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tenon-dev/tenon/internal/controller"
)

// metrics are the server's Prometheus collectors, on a registry of its own.
type metrics struct {
	reg                          *prometheus.Registry
	ooms, teardowns, remat, deny prometheus.Counter
	pageOuts, pageIns            prometheus.Counter
	actionLatency, queuedLatency prometheus.Histogram
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tenon", Name: name, Help: help})
		m.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "tenon", Name: name, Help: help}, f))
	}
	m.ooms = counter("oom_events_total", "Actions OOM-killed.")
	m.teardowns = counter("teardowns_total", "Sandboxes destroyed.")
	m.remat = counter("rematerializations_total", "Sandboxes created for an agent that had one before.")
	m.deny = counter("gate_denials_total", "Sandboxes paused by the policy (gate denials).")
	m.pageOuts = counter("page_outs_total", "Idle sandboxes frozen and paged out to compressed swap.")
	m.pageIns = counter("page_ins_total", "Paged-out sandboxes paged back in (on demand or ahead of the next action).")
	buckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	m.actionLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "tenon", Name: "action_duration_seconds", Help: "Action execution time.", Buckets: buckets})
	m.queuedLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "tenon", Name: "action_queued_seconds", Help: "Time an action waited for the policy.", Buckets: buckets})
	m.reg.MustRegister(m.actionLatency, m.queuedLatency)

	gauge("budget_bytes", "Workload domain memory budget.", func() float64 { return float64(s.cfg.Budget) })
	gauge("domain_memory_bytes", "Workload domain memory usage.", func() float64 {
		if s.cfg.Domain == nil {
			return 0
		}
		u, _ := s.cfg.Domain.Usage()
		return float64(u)
	})
	gauge("pressure", "Memory pressure: 0 green, 1 yellow, 2 red.", func() float64 {
		avail := s.cfg.Budget
		if s.cfg.Domain != nil {
			avail, _ = s.cfg.Domain.Available()
		}
		return map[string]float64{PressureGreen: 0, PressureYellow: 1, PressureRed: 2}[pressureOf(s.cfg.Budget, avail)]
	})
	gauge("daemon_memory_bytes", "Memory the daemon's Go runtime holds from the OS (outside the budget).", func() float64 { return float64(daemonMemory()) })
	gauge("body_memory_bytes", "Memory the large request bodies in flight hold of the body memory (a quarter of --daemon-memory); a request that finds too little left is answered 503.", func() float64 { return float64(s.bodies.inUse()) })
	gauge("admitted_charge_bytes", "Admission charge of running actions.", func() float64 { return float64(s.charge.Load()) })
	gauge("queued_agents", "Agents waiting for the policy to start them.", func() float64 { return float64(s.queuedAgents.Load()) })
	gauge("queued_actions", "Actions waiting for admission.", func() float64 { return float64(s.queuedActions.Load()) })
	gauge("running_actions", "Actions executing.", func() float64 { return float64(s.running.Load()) })
	gauge("resident_sandboxes", "Live sandboxes.", func() float64 { return float64(s.live.Len()) })
	gauge("paged_out_sandboxes", "Live sandboxes frozen with their memory paged out.", func() float64 {
		_, paged := s.residencyCounts()
		return float64(paged)
	})
	gauge("absent_agents", "Agents without a sandbox (never created, torn down or lost).", func() float64 {
		absent, _ := s.residencyCounts()
		return float64(absent)
	})
	return m
}

// observe counts the events the metrics track.
func (m *metrics) observe(e controller.Event) {
	switch e.Kind {
	case controller.EventOOM:
		m.ooms.Inc()
	case controller.EventSandboxDestroy:
		m.teardowns.Inc()
	case controller.EventPause:
		m.deny.Inc()
	case controller.EventPageOut:
		m.pageOuts.Inc()
	case controller.EventPageIn:
		m.pageIns.Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// residencyCounts counts the agents without a sandbox and those whose
// sandbox is paged out.
func (s *Server) residencyCounts() (absent, pagedOut int) {
	for _, ag := range s.sortedAgents() {
		ag.mu.Lock()
		sb := ag.sandbox
		ag.mu.Unlock()
		switch s.residencyOf(ag, sb) {
		case ResidencyAbsent:
			absent++
		case ResidencyPagedOut:
			pagedOut++
		}
	}
	return absent, pagedOut
}
