package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/harness"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/swap"
)

// HarnessReplay replays each workflow twice, baseline then intents, each
// in a fresh process sandbox of one workload domain. It makes sure swap is
// on (setting up zram of cfg.Swap when none is) and removes the swap it set
// up, the domain and the backend at the end, also on error. The first
// replay that fails stops the run.
func HarnessReplay(ctx context.Context, cfg HarnessConfig) (*HarnessResult, error) {
	log := discardLog(cfg.Log)
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	if err := cgroup.RequireRoot(); err != nil {
		return nil, err
	}
	sets, err := harnessSets(cfg)
	if err != nil {
		return nil, err
	}
	ratio, cleanup, err := harnessSwap(ctx, cfg.Swap, progress, log)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return nil, err
	}
	dom, err := cgroup.OpenDomain(ctx, layout, fmt.Sprintf("tenon-harness-%d", os.Getpid()), cfg.Budget, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = dom.Close(cctx)
	}()
	state, err := os.MkdirTemp("", "tenon-harness-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(state)
	be, err := process.New(process.Config{StateDir: state, CgroupParent: dom.Group().Path(), Layout: layout, Logger: log})
	if err != nil {
		return nil, err
	}
	defer be.Close()

	o := harness.Options{Backend: be, Layout: layout, Grace: cfg.Grace, Lead: cfg.Lead, Sample: cfg.Sample,
		Ratio: ratio, Log: log, Heap: cfg.Heap}
	started := time.Now()
	res := &HarnessResult{}
	n := 0
	for _, s := range sets {
		for _, wf := range s.wfs {
			steps := harness.Plan(wf, cfg.Plan)
			p := harness.Pair{Set: s.name}
			for _, mode := range []harness.Mode{harness.Baseline, harness.Intents} {
				n++
				fmt.Fprintf(progress, "%s %s %s (%d steps)...\n", s.name, wf.ID, mode, len(steps))
				r, err := harness.Replay(ctx, o, mode, wf.ID, fmt.Sprintf("tenon-harness-%d-%d", os.Getpid(), n), steps)
				if err != nil {
					return nil, fmt.Errorf("replaying %s (%s): %w", wf.ID, mode, err)
				}
				if mode == harness.Baseline {
					p.Baseline = r
				} else {
					p.Intents = r
				}
			}
			res.Pairs = append(res.Pairs, p)
		}
	}
	for _, s := range sets {
		res.Totals = append(res.Totals, harness.Total(res.Pairs, s.name))
	}
	res.Totals = append(res.Totals, harness.Total(res.Pairs, ""))
	res.Wall = time.Since(started)
	return res, nil
}

// harnessSwap makes sure swap is on for the run. It first takes the lock
// every user of tenon's zram takes (live tests, other replays), so no one
// turns the swap off under the run; existing swap is then used as is,
// otherwise zram of size is set up and cleanup removes it, telling warn
// when that fails. ratio reports the RAM zram spends per stored byte.
func harnessSwap(ctx context.Context, size int64, warn io.Writer, log *slog.Logger) (ratio func() float64, cleanup func(), err error) {
	zramRatio := func() float64 {
		st, err := swap.GetStatus()
		if err != nil || st.MM == nil || st.MM.OrigDataSize == 0 {
			return 0
		}
		return float64(st.MM.MemUsedTotal) / float64(st.MM.OrigDataSize)
	}
	unlock, err := swap.Lock()
	if err != nil {
		return nil, nil, err
	}
	st, err := swap.GetStatus()
	if err != nil {
		unlock()
		return nil, nil, err
	}
	if len(st.Swaps) > 0 {
		if st.Active {
			return zramRatio, unlock, nil
		}
		return nil, unlock, nil // disk swap costs no RAM
	}
	if size <= 0 {
		unlock()
		return nil, nil, errNoSwap
	}
	if err := swap.Enable(ctx, size, log); err != nil {
		unlock()
		return nil, nil, fmt.Errorf("setting up zram swap: %w", err)
	}
	return zramRatio, func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := swap.Disable(dctx); err != nil {
			fmt.Fprintf(warn, "tenon harness replay: removing zram swap: %v\n", err)
		}
		unlock()
	}, nil
}
