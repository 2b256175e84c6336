//go:build linux

package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// Options configure Replay.
type Options struct {
	Backend *process.Backend
	Layout  *cgroup.Layout
	// Exe is the tenon binary inside the sandbox ("/usr/local/bin/tenon").
	Exe  string
	Heap HeapSpec
	// Grace is the broker's idle time before a suspension (broker.DefaultGrace).
	Grace time.Duration
	// Lead is how long before the model's response the reasoning ends and
	// the harness is prefetched (1 s when 0).
	Lead time.Duration
	// Sample is the memory sampling period (50 ms when 0).
	Sample time.Duration
	// Ratio returns the zram compression ratio (compressed/original bytes)
	// the sandbox's swap costs in RAM; nil counts swap as free.
	Ratio func() float64
	// ProcRoot is the host's /proc ("/proc" when empty).
	ProcRoot string
	Log      *slog.Logger
}

const (
	heapLog   = "/tmp/tenon-harness.log"
	agentID   = "harness"
	readyWait = 60 * time.Second
)

func (o *Options) defaults() {
	if o.Exe == "" {
		o.Exe = "/usr/local/bin/tenon"
	}
	if o.Lead <= 0 {
		o.Lead = time.Second
	}
	if o.Sample <= 0 {
		o.Sample = 50 * time.Millisecond
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Heap.MiB <= 0 {
		o.Heap.MiB = 300
	}
}

// Replay runs steps once in mode in a fresh sandbox id and removes the
// sandbox afterwards.
func Replay(ctx context.Context, o Options, mode Mode, workflow, id string, steps []Step) (res Result, err error) {
	o.defaults()
	res = Result{Workflow: workflow, Mode: mode, Steps: len(steps)}
	info, err := o.Backend.Create(ctx, sandbox.Spec{ID: id})
	if err != nil {
		return res, fmt.Errorf("creating sandbox: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if derr := o.Backend.Destroy(dctx, id); derr != nil {
			err = errors.Join(err, fmt.Errorf("destroying sandbox: %w", derr))
		}
	}()
	sb, err := cgroup.Open(o.Layout, info.CgroupPath)
	if err != nil {
		return res, err
	}
	floor, err := sb.Memory()
	if err != nil {
		return res, err
	}
	res.FloorMiB = float64(floor.Usage) / mib

	hp, hg, err := o.startHeap(ctx, id, info.CgroupPath, sb)
	if hg != nil {
		defer func() {
			kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if kerr := hg.KillAll(kctx); kerr != nil {
				err = errors.Join(err, fmt.Errorf("stopping harness: %w", kerr))
			} else if derr := hg.Delete(); derr != nil {
				err = errors.Join(err, fmt.Errorf("removing harness group: %w", derr))
			}
		}()
	}
	if err != nil {
		return res, err
	}
	layer, err := o.Backend.WritableLayer(id)
	if err != nil {
		return res, err
	}
	logPath := filepath.Join(layer, heapLog)
	if _, err := waitHeap(ctx, logPath, "ready", 0, readyWait); err != nil {
		return res, err
	}

	start := time.Now()
	smp := o.sample(sb, start)
	run := &run{o: o, res: &res, heap: hp}
	if mode == Intents {
		run.start(ctx, hg)
	}
	err = run.steps(ctx, id, steps, mode == Intents)
	res.HarnessTime = time.Since(start)
	run.stop()
	res.Samples = smp.stop()
	if err != nil {
		return res, err
	}
	res.RAMMiBs, res.BackingMiBs = Integrate(res.Samples, floor.Usage)
	for _, s := range res.Samples {
		res.PeakMiB = max(res.PeakMiB, float64(s.RAM-floor.Usage)/mib)
	}

	// Data intact: the heap verifies every chunk on SIGUSR1.
	n := len(heapEvents(readFile(logPath)))
	if err := syscall.Kill(hp, syscall.SIGUSR1); err != nil {
		return res, fmt.Errorf("asking the heap to verify: %w", err)
	}
	ev, err := waitHeap(ctx, logPath, "ok", n, 30*time.Second)
	if err != nil {
		return res, err
	}
	res.Verified = ev.Kind == "ok"
	return res, nil
}

// startHeap starts `tenon harness heap` in the background of the sandbox,
// finds its host pid and moves it into <sandbox>/harness.
func (o *Options) startHeap(ctx context.Context, id, sbPath string, sb cgroup.Group) (int, cgroup.Group, error) {
	h := o.Heap
	cmd := fmt.Sprintf("%s harness heap --heap %dMiB --touch %d --step %s --random-per-page %d </dev/null >%s 2>&1 &",
		o.Exe, h.MiB, max(h.TouchPercent, 1), max(h.Step, 10*time.Millisecond), max(h.RandomPerPage, 8), heapLog)
	r, err := o.Backend.Exec(ctx, id, sandbox.ExecRequest{Shell: cmd, Background: true})
	if err != nil || r.ExitCode != 0 {
		return 0, nil, fmt.Errorf("starting the harness heap: exit %d %q: %v", r.ExitCode, r.Stderr, err)
	}
	var pid int
	for deadline := time.Now().Add(5 * time.Second); pid == 0; {
		pids, err := sb.Pids()
		if err != nil {
			return 0, nil, err
		}
		for _, p := range pids {
			if b, err := os.ReadFile(filepath.Join(o.ProcRoot, strconv.Itoa(p), "cmdline")); err == nil &&
				strings.Contains(string(b), "harness\x00heap\x00") {
				pid = p
			}
		}
		if pid == 0 {
			if time.Now().After(deadline) {
				return 0, nil, errors.New("the harness heap did not start")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	g, err := cgroup.Create(o.Layout, sbPath+"/harness")
	if err != nil {
		return pid, nil, fmt.Errorf("creating harness group: %w", err)
	}
	if err := g.AddProc(pid); err != nil {
		return pid, g, fmt.Errorf("moving the harness into its group: %w", err)
	}
	return pid, g, nil
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// waitHeap waits for the heap log to hold more than skip events, the
// first new one being kind (or "failed", an error).
func waitHeap(ctx context.Context, path, kind string, skip int, timeout time.Duration) (heapEvent, error) {
	deadline := time.Now().Add(timeout)
	for {
		evs := heapEvents(readFile(path))
		if len(evs) > skip {
			ev := evs[skip]
			if ev.Kind != kind {
				return ev, fmt.Errorf("harness heap: %s, want %s: %q", ev.Kind, kind, readFile(path))
			}
			return ev, nil
		}
		if time.Now().After(deadline) {
			return heapEvent{}, fmt.Errorf("harness heap: no %s line after %s; log: %q", kind, timeout, readFile(path))
		}
		select {
		case <-ctx.Done():
			return heapEvent{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sampler records the sandbox's memory every period.
type sampler struct {
	mu      sync.Mutex
	samples []Sample
	done    chan struct{}
	wg      sync.WaitGroup
}

func (o *Options) sample(g cgroup.Group, start time.Time) *sampler {
	s := &sampler{done: make(chan struct{})}
	read := func() {
		m, err := g.Memory()
		if err != nil {
			return
		}
		var comp int64
		if o.Ratio != nil && m.Swap > 0 {
			comp = int64(float64(m.Swap) * o.Ratio())
		}
		s.mu.Lock()
		s.samples = append(s.samples, Sample{At: time.Since(start), RAM: m.Usage, Compressed: comp})
		s.mu.Unlock()
	}
	read()
	s.wg.Go(func() {
		t := time.NewTicker(o.Sample)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				read()
				return
			case <-t.C:
				read()
			}
		}
	})
	return s
}

func (s *sampler) stop() []Sample {
	close(s.done)
	s.wg.Wait()
	return s.samples
}
