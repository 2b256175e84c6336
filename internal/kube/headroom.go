package kube

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
)

// NodeStatus is where the publisher writes the node's slots; *Client is
// one.
type NodeStatus interface {
	PatchNodeSlots(ctx context.Context, node string, n int) error
}

var _ NodeStatus = (*Client)(nil)

// PublisherConfig configures a Publisher. Zero values take the documented
// defaults.
type PublisherConfig struct {
	Node   string     // the node's name (the downward API's spec.nodeName); required
	Status NodeStatus // required
	// Slots is the node's agent slots; the node agent computes it (floors,
	// predicted bursts, the budget). The scheduler subtracts the slot
	// requests of the pods bound to the node from what is published, so
	// Slots counts the agent pods the node runs that hold a slot plus how
	// many more it can take. Required.
	Slots func() int
	// Poll is how often Slots is read; a change is published at once.
	// Default 1 s.
	Poll time.Duration
	// Resync republishes an unchanged count this often, so a status that
	// was lost or overwritten is restored; default 1 min.
	Resync time.Duration
	Clock  clock.Clock // default clock.Real
	Log    *slog.Logger
}

// Publisher publishes the node's headroom as the extended resource
// SlotsResource (capacity and allocatable) on its status, so the default
// scheduler places agent pods that request one slot only where memory is.
type Publisher struct {
	cfg PublisherConfig

	mu        sync.Mutex
	published int // -1: never
	at        time.Time
	failures  int
}

// NewPublisher returns a publisher; Run publishes.
func NewPublisher(cfg PublisherConfig) *Publisher {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Resync <= 0 {
		cfg.Resync = time.Minute
	}
	cfg.Clock, cfg.Log = clockAndLog(cfg.Clock, cfg.Log)
	return &Publisher{cfg: cfg, published: -1}
}

// Published returns the last count the API server accepted; ok is false
// before the first.
func (p *Publisher) Published() (n int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.published, p.published >= 0
}

// Failures counts patches the API server refused or that did not reach it.
func (p *Publisher) Failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures
}

// Run publishes at once and then whenever the count changes or Resync
// passes, until ctx ends. A failed patch is logged and retried at the next
// poll.
func (p *Publisher) Run(ctx context.Context) error {
	return every(ctx, p.cfg.Clock, p.cfg.Poll, nil, func() { p.Sync(ctx) })
}

// Sync publishes the current count if it changed or Resync passed since
// the last publication.
func (p *Publisher) Sync(ctx context.Context) {
	n := max(p.cfg.Slots(), 0)
	now := p.cfg.Clock.Now()
	p.mu.Lock()
	due := n != p.published || now.Sub(p.at) >= p.cfg.Resync
	p.mu.Unlock()
	if !due {
		return
	}
	err := p.cfg.Status.PatchNodeSlots(ctx, p.cfg.Node, n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.failures++
		p.cfg.Log.Warn("publishing node headroom", "node", p.cfg.Node, "slots", n, "err", err)
		return
	}
	if n != p.published {
		p.cfg.Log.Info("node headroom published", "node", p.cfg.Node, "resource", SlotsResource, "slots", n)
	}
	p.published, p.at = n, now
}
