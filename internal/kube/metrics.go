package kube

import "github.com/prometheus/client_golang/prometheus"

// Collectors returns the Prometheus collectors of the node agent's
// control-plane side, for the registry the node agent serves: the slots
// last published (tenon_node_agent_slots) and the failed patches when p is
// not nil, and the Sandboxes suspended and resumed and the patches that
// failed when r is not nil.
func Collectors(p *Publisher, r *Residency) []prometheus.Collector {
	var cs []prometheus.Collector
	if p != nil {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "tenon", Name: "node_agent_slots",
			Help: "Agents the node can still take, as last published on its status (" + SlotsResource + "); -1 before the first publication.",
		}, func() float64 {
			n, ok := p.Published()
			if !ok {
				return -1
			}
			return float64(n)
		}), prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "tenon", Name: "node_slots_publish_failures_total",
			Help: "Patches of the node's " + SlotsResource + " that failed (retried at the next poll).",
		}, func() float64 { return float64(p.Failures()) }))
	}
	if r != nil {
		counter := func(name, help string, f func(ResidencyStats) int) {
			cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "tenon", Name: name, Help: help},
				func() float64 { return float64(f(r.Stats())) }))
		}
		counter("sandbox_suspends_total", "Sandboxes set to Suspended by the residency policy.", func(s ResidencyStats) int { return s.Suspends })
		counter("sandbox_resumes_total", "Suspended Sandboxes set to Running again.", func(s ResidencyStats) int { return s.Resumes })
		counter("sandbox_mode_failures_total", "Sandbox operatingMode patches that failed (retried).", func(s ResidencyStats) int { return s.Failures })
	}
	return cs
}
