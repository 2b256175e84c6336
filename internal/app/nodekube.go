package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenon-dev/tenon/internal/kube"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/node"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency"
)

// nodeKube is the node agent's control-plane side: the headroom publisher
// (a policy with admission: agent pacing's slots, policy.AgentSlots over
// the node's own measured floors and predictions) and Sandbox residency
// (a policy with residency: kube.Residency over the policy's pressure).
// Both are nil without NodeConfig.Kube.
type nodeKube struct {
	pub *kube.Publisher
	res *kube.Residency
}

// newNodeKube builds what the policy sp needs of the API server.
func newNodeKube(cfg NodeConfig, sp policy.Spec, p *live.Policy, log *slog.Logger) (*nodeKube, error) {
	cp := &nodeKube{}
	if cfg.Kube == nil {
		if sp.Admission || sp.Residency {
			log.Info("node: no API server (--kube-*): agent slots are not published and no Sandbox is suspended", "policy", cfg.Policy)
		}
		return cp, nil
	}
	c, err := kube.NewClient(*cfg.Kube)
	if err != nil {
		return nil, err
	}
	if sp.Admission {
		slots := func() int {
			n, _ := p.AgentSlots(context.Background())
			return n
		}
		cp.pub = kube.NewPublisher(kube.PublisherConfig{Node: cfg.NodeName, Status: c, Slots: slots, Poll: cfg.KubePoll, Log: log})
	} else {
		log.Warn("node: agent slots need a policy with admission (--policy tenon): not published", "policy", cfg.Policy)
	}
	if sp.Residency {
		cp.res, err = kube.NewResidency(kube.ResidencyConfig{Node: cfg.NodeName, Sandboxes: c, Pressure: p.Pressure, Log: log})
		if err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// register adds the publisher's and residency's metrics to reg.
func (cp *nodeKube) register(reg prometheus.Registerer) {
	reg.MustRegister(kube.Collectors(cp.pub, cp.res)...)
}

// suspender is residency for the node's harness; nil without it.
func (cp *nodeKube) suspender() node.Suspender {
	if cp.res == nil {
		return nil
	}
	return sandboxSuspender{cp.res}
}

// run starts the publisher and residency on wg until ctx ends.
func (cp *nodeKube) run(ctx context.Context, wg *sync.WaitGroup) {
	if cp.pub != nil {
		wg.Go(func() { _ = cp.pub.Run(ctx) })
	}
	if cp.res != nil {
		wg.Go(func() { _ = cp.res.Run(ctx) })
	}
}

// handle adds the resume route to mux when residency runs.
func (cp *nodeKube) handle(mux *http.ServeMux) {
	if cp.res != nil {
		mux.Handle(kube.ResumePattern, kube.ResumeHandler(cp.res))
	}
}

// describe completes the status line.
func (cp *nodeKube) describe() string {
	s := ""
	if cp.pub != nil {
		s += ", publishing " + kube.SlotsResource
	}
	if cp.res != nil {
		s += ", suspending idle restart-safe Sandboxes"
	}
	return s
}

// sandboxSuspender is kube.Residency behind the node's pod names: under
// agent-sandbox a Sandbox's pod has the Sandbox's name.
type sandboxSuspender struct{ r *kube.Residency }

func ref(pod node.PodRef) kube.SandboxRef {
	return kube.SandboxRef{Namespace: pod.Namespace, Name: pod.Name}
}

func (s sandboxSuspender) Idle(pod node.PodRef, o residency.Observation, ws int64, wait time.Duration) {
	s.r.Idle(ref(pod), o, ws, wait)
}

func (s sandboxSuspender) Resume(pod node.PodRef) bool    { return s.r.Resume(ref(pod)) }
func (s sandboxSuspender) Suspended(pod node.PodRef) bool { return s.r.Suspended(ref(pod)) }
