package live

import (
	"math"
	"sync/atomic"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/residency"
)

// views holds what the residency manager reads from the adapter on an
// agent's path (every action boundary) without waiting for p.mu: the
// machine's pressure, free share and reclaim need as of its last sample,
// published by the gate loop after each Sample (the only step that changes
// them), the number of actions waiting for admission, published also when
// an action starts or stops waiting, and the run's event sink. The
// admission and gate loops hold p.mu while they observe and decide; a
// boundary that queued behind them delayed its agent's next model wait (on
// the real traces at 1 GiB, live: 0.2 s per action, a tenth of the run's
// summed workflow latency).
type views struct {
	pressure atomic.Int64
	waiting  atomic.Int64
	free     atomic.Uint64 // math.Float64bits of the free share
	need     atomic.Int64  // the machine's ReclaimNeed
	emit     atomic.Pointer[func(controller.Event)]
}

// publish records the machine's pressure, waiting actions, free share and
// reclaim need (p.mu held).
func (p *Policy) publish() {
	p.views.pressure.Store(int64(p.m.Pressure()))
	p.views.waiting.Store(int64(p.m.Waiting()))
	p.views.free.Store(math.Float64bits(p.m.FreeShare()))
	p.views.need.Store(p.m.ReclaimNeed())
}

// Pressure is the machine's pressure (the gate's Q(t)) at its last sample,
// for a residency manager or the node agent's Sandbox suspends.
func (p *Policy) Pressure() residency.Pressure { return gate.Pressure(p.views.pressure.Load()) }

// waitingActions is the number of actions waiting for admission as last
// published, for the residency manager (residency.Config.Waiting).
func (p *Policy) waitingActions() int { return int(p.views.waiting.Load()) }

// reclaimNeed is the machine's ReclaimNeed as last published, for the
// residency manager (residency.Config.Need).
func (p *Policy) reclaimNeed() int64 { return p.views.need.Load() }

// freeShare is the machine's FreeShare at its last sample, for the
// residency manager.
func (p *Policy) freeShare() float64 { return math.Float64frombits(p.views.free.Load()) }
