package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// peakAgent is an agent whose workflow's profiled lifetime peak is peakMiB.
func peakAgent(i int, peakMiB float64) *controller.Agent {
	w := &trajectory.Workflow{ID: fmt.Sprintf("wf-%d", i), Actions: []trajectory.Action{
		{Class: "bash", Command: "x", Mem: &trajectory.MemProfile{PeakMiB: peakMiB / 2, RetainMiB: peakMiB / 2, Background: true}},
		{Class: "bash", Command: "y", Mem: &trajectory.MemProfile{PeakMiB: peakMiB / 2}},
	}}
	return &controller.Agent{ID: w.ID, Workflow: w}
}

// resHarness runs AgentReady calls in goroutines and records who returned.
type resHarness struct {
	t      *testing.T
	r      *Reservation
	agents []*controller.Agent
	mu     sync.Mutex
	passed map[int]error
	cancel map[int]context.CancelFunc
}

// arrive starts agent i's AgentReady and lets it reach its decision.
func (h *resHarness) arrive(i int) {
	ctx, cancel := context.WithCancel(h.t.Context())
	h.cancel[i] = cancel
	go func() {
		err := h.r.AgentReady(ctx, h.agents[i])
		h.mu.Lock()
		h.passed[i] = err
		h.mu.Unlock()
	}()
	synctest.Wait()
}

// running lists the agents whose AgentReady returned nil and are not done.
func (h *resHarness) running(done map[int]bool) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for i, err := range h.passed {
		if err == nil && !done[i] {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

func TestReservationAdmission(t *testing.T) {
	tests := []struct {
		name   string
		budget int64 // MiB
		margin int64 // MiB
		peaks  []float64
		// wantArrived is who runs once every agent has arrived in order;
		// then each agent of dones finishes in turn and wantAfter[k] runs.
		wantArrived []int
		dones       []int
		wantAfter   [][]int
	}{
		{name: "all fit", budget: 1000, peaks: []float64{300, 300, 300},
			wantArrived: []int{0, 1, 2}, dones: []int{1}, wantAfter: [][]int{{0, 2}}},
		{name: "exact fit", budget: 1000, peaks: []float64{600, 400},
			wantArrived: []int{0, 1}},
		{name: "second waits for release", budget: 1000, peaks: []float64{600, 500},
			wantArrived: []int{0}, dones: []int{0}, wantAfter: [][]int{{1}}},
		{name: "fifo without backfilling", budget: 1000, peaks: []float64{600, 500, 100},
			wantArrived: []int{0}, dones: []int{0}, wantAfter: [][]int{{1, 2}}},
		{name: "oversized runs alone", budget: 1000, peaks: []float64{200, 1500, 100},
			wantArrived: []int{0}, dones: []int{0, 1}, wantAfter: [][]int{{1}, {2}}},
		{name: "oversized first", budget: 1000, peaks: []float64{1500, 100},
			wantArrived: []int{0}, dones: []int{0}, wantAfter: [][]int{{1}}},
		{name: "margin counts", budget: 1000, margin: 100, peaks: []float64{450, 450},
			wantArrived: []int{0}, dones: []int{0}, wantAfter: [][]int{{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, err := NewReservation(0, tt.margin*units.MiB, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.Start(t.Context(), controller.Env{Budget: tt.budget * units.MiB}); err != nil {
					t.Fatal(err)
				}
				h := &resHarness{t: t, r: r, passed: map[int]error{}, cancel: map[int]context.CancelFunc{}}
				for i, p := range tt.peaks {
					h.agents = append(h.agents, peakAgent(i, p))
				}
				for i := range h.agents {
					h.arrive(i)
				}
				done := map[int]bool{}
				if got := h.running(done); !slices.Equal(got, tt.wantArrived) {
					t.Fatalf("after arrivals running %v, want %v", got, tt.wantArrived)
				}
				for k, d := range tt.dones {
					r.AgentDone(h.agents[d], nil)
					done[d] = true
					synctest.Wait()
					if got := h.running(done); !slices.Equal(got, tt.wantAfter[k]) {
						t.Fatalf("after agent %d done running %v, want %v", d, got, tt.wantAfter[k])
					}
				}
				var want int64
				for _, i := range h.running(done) {
					want += r.Need(h.agents[i])
				}
				if got := r.Reserved(); got != want {
					t.Errorf("Reserved() = %d, want the running agents' %d", got, want)
				}
				for i := range h.agents { // unblock the rest
					h.cancel[i]()
				}
			})
		})
	}
}

func TestReservationNeed(t *testing.T) {
	r, err := NewReservation(units.GiB, 10*units.MiB, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := peakAgent(0, 300) // retained 150 + peak 150
	if got, want := r.Need(a), 310*units.MiB; got != want {
		t.Errorf("Need = %d, want %d", got, want)
	}
	if got := r.Need(&controller.Agent{ID: "empty"}); got != 10*units.MiB {
		t.Errorf("Need without workflow = %d, want the margin", got)
	}
}

func TestReservationCancelLeavesNoReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := NewReservation(1000*units.MiB, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(t.Context(), controller.Env{}); err != nil {
			t.Fatal(err)
		}
		h := &resHarness{t: t, r: r, passed: map[int]error{}, cancel: map[int]context.CancelFunc{}}
		for i, p := range []float64{600, 500, 100} {
			h.agents = append(h.agents, peakAgent(i, p))
			h.arrive(i)
		}
		h.cancel[1]() // the head of the queue gives up: agent 2 now fits
		synctest.Wait()
		if err := h.passed[1]; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled AgentReady returned %v, want context.Canceled", err)
		}
		if got := h.running(nil); !slices.Equal(got, []int{0, 2}) {
			t.Fatalf("running %v, want [0 2]", got)
		}
		if got, want := r.Reserved(), 700*units.MiB; got != want {
			t.Errorf("Reserved = %d, want %d", got, want)
		}
		r.AgentDone(h.agents[0], nil)
		r.AgentDone(h.agents[2], nil)
		if got := r.Reserved(); got != 0 {
			t.Errorf("Reserved after all done = %d, want 0", got)
		}
		// A cancelled context before the call leaves nothing behind either.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		big := peakAgent(9, 2000)
		r.AgentDone(h.agents[0], nil) // unknown agent: logged, no effect
		if err := r.AgentReady(ctx, big); err == nil {
			// Admission may win the race with a done context; give it back.
			r.AgentDone(big, nil)
		}
		if got := r.Reserved(); got != 0 {
			t.Errorf("Reserved after cancelled call = %d, want 0", got)
		}
	})
}

func TestReservationLookup(t *testing.T) {
	tests := []struct {
		name    string
		params  map[string]string
		budget  int64
		wantErr error
	}{
		{name: "default", budget: units.GiB},
		{name: "margin", params: map[string]string{"margin": "64MiB"}, budget: units.GiB},
		{name: "bad margin", params: map[string]string{"margin": "lots"}, wantErr: ErrBadOption},
		{name: "unknown param", params: map[string]string{"slack": "1"}, wantErr: ErrBadOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Lookup("agent-reservation", Options{Budget: tt.budget, Params: tt.params})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && p.Name() != "agent-reservation" {
				t.Errorf("Name = %q", p.Name())
			}
		})
	}
}

func TestReservationStartNeedsBudget(t *testing.T) {
	r, err := NewReservation(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(t.Context(), controller.Env{}); !errors.Is(err, ErrBadOption) {
		t.Errorf("Start without a budget: %v, want ErrBadOption", err)
	}
}
