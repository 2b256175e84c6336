//go:build linux

package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/broker"
	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/anchor/suspend"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// run is one replay's control flow: the harness's phases, reported to the
// broker in intents mode.
type run struct {
	o    Options
	res  *Result
	heap int

	broker *broker.Broker
	act    *suspend.Harness
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
}

// start creates the broker and the actuator and watches for idle grace.
func (r *run) start(ctx context.Context, hg cgroup.Group) {
	r.broker = broker.New(broker.Options{Grace: r.o.Grace})
	r.act = suspend.New(hg, &pageout.Pager{ProcRoot: r.o.ProcRoot, Log: r.o.Log}, r.o.Log)
	r.broker.AgentStart(agentID)
	wctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	r.wg.Go(func() { suspend.Watch(wctx, r.broker, r.act, 0, r.record) })
}

func (r *run) stop() {
	if r.cancel != nil {
		r.cancel()
		r.wg.Wait()
		r.res.Suspensions = r.act.Suspensions()
	}
}

// record keeps the share of the heap paged out by each suspension.
func (r *run) record(rec suspend.Record, err error) {
	if err != nil || !rec.Confirmed {
		return
	}
	heap := float64(int64(r.o.Heap.MiB) * mib)
	var out int64
	for _, st := range rec.Stats {
		out += st.Before.RssAnon - st.After.RssAnon
	}
	share := float64(out) / heap
	r.mu.Lock()
	if r.res.PagedOut == 0 || share < r.res.PagedOut {
		r.res.PagedOut = share
	}
	r.mu.Unlock()
	r.o.Log.Debug("harness paged out", "mib", out/mib, "share", share, "took", rec.Total)
}

// apply carries out a decision an event returned.
func (r *run) apply(ctx context.Context, d broker.Decision) error {
	if d.Action == broker.Nothing {
		return nil
	}
	rec, err := r.act.Apply(ctx, r.broker, d)
	r.o.Log.Debug("harness decision applied", "action", d.Action, "took", rec.Total, "err", err)
	return err
}

// steps replays every step: model wait, then the tool call.
func (r *run) steps(ctx context.Context, id string, steps []Step, intents bool) error {
	for i, st := range steps {
		respAt := time.Now().Add(st.Wait)
		if intents {
			if err := r.apply(ctx, r.broker.ModelBegin(agentID)); err != nil {
				return err
			}
			if st.Wait > r.o.Lead {
				if err := sleepUntil(ctx, respAt.Add(-r.o.Lead)); err != nil {
					return err
				}
				if err := r.apply(ctx, r.broker.ReasoningEnd(agentID)); err != nil {
					return err
				}
			}
		}
		if err := sleepUntil(ctx, respAt); err != nil {
			return err
		}
		r.res.Late += max(time.Since(respAt), 0)
		if intents {
			t := time.Now()
			if err := r.apply(ctx, r.broker.ModelEnd(agentID)); err != nil {
				return err
			}
			r.res.ResumeMax = max(r.res.ResumeMax, time.Since(t))
			if err := r.apply(ctx, r.broker.ToolBegin(agentID)); err != nil {
				return err
			}
		}
		t := time.Now()
		res, err := r.o.Backend.Exec(ctx, id, sandbox.ExecRequest{Argv: st.Argv, Scoped: intents})
		r.res.ToolTime += time.Since(t)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i, st.Class, err)
		}
		if res.ExitCode != 0 {
			r.o.Log.Warn("tool failed", "step", i, "exit", res.ExitCode, "stderr", string(res.Stderr))
		}
		if intents {
			if err := r.apply(ctx, r.broker.ToolEnd(agentID)); err != nil {
				return err
			}
		}
	}
	return nil
}

// sleepUntil waits until t, or until ctx is done.
func sleepUntil(ctx context.Context, t time.Time) error {
	return clock.Sleep(ctx, clock.Real{}, time.Until(t))
}
