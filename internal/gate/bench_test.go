package gate

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
)

// benchObservation is n sandboxes with mixed growth: a quarter resident, a
// quarter cooling, half growing at 1–64 MiB/s.
type benchWorld struct {
	obs   Observation
	rates []int64 // bytes per period
}

func newBenchWorld(n int, avail int64) *benchWorld {
	w := &benchWorld{obs: Observation{Budget: 64 << 30, Available: avail}}
	for i := range n {
		var r int64
		switch i % 4 {
		case 0:
			r = 0
		case 1:
			r = -MiB / 10
		default:
			r = int64(1+i%64) * MiB / 10
		}
		w.rates = append(w.rates, r)
		w.obs.Sandboxes = append(w.obs.Sandboxes, Sample{ID: fmt.Sprintf("sb-%05d", i), Footprint: 1 << 30})
	}
	return w
}

func (w *benchWorld) advance() {
	for i := range w.obs.Sandboxes {
		w.obs.Sandboxes[i].Footprint += w.rates[i]
		w.obs.Sandboxes[i].CPU += time.Millisecond
	}
}

// BenchmarkStep1000 is one control iteration over 1,000 sandboxes (goal <= 1 ms).
func BenchmarkStep1000(b *testing.B) {
	for _, tc := range []struct {
		name  string
		avail int64
	}{
		{"green", 60 << 30},
		{"yellow", 11 << 30}, // budget 64 GiB: yellow below 16 GiB projected free
		{"red", 5 << 30},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := newBenchWorld(1000, tc.avail)
			c := New(Config{})
			now := time.Unix(1_700_000_000, 0)
			for range 5 { // warm up estimates
				now = now.Add(tick)
				w.advance()
				c.Step(now, w.obs)
			}
			var d Decision
			for b.Loop() {
				now = now.Add(tick)
				w.advance()
				d = c.Step(now, w.obs)
			}
			if d.Pressure.String() != tc.name {
				b.Fatalf("pressure = %v, want %s", d.Pressure, tc.name)
			}
		})
	}
}

// BenchmarkLoopRedToDeny measures on the real clock, through Loop.Run with
// the default 100 ms period and a fake actuator: the delay from the red
// snapshot leaving the Observer to the published Deny (ms-sample-to-deny),
// and from the domain turning red to the Deny, which includes waiting for the
// next sample (ms-red-to-deny, bounded by one period plus that compute).
func BenchmarkLoopRedToDeny(b *testing.B) {
	w := newWorld("a", "b")
	act := newFakeActuator()
	act.denied = make(chan string, 4)
	var mu sync.Mutex
	var sampled time.Time // when the first red snapshot left the Observer
	observe := func(ctx context.Context) (Observation, error) {
		obs, err := w.observe(ctx)
		mu.Lock()
		if obs.Available < testBudget && sampled.IsZero() {
			sampled = time.Now()
		}
		mu.Unlock()
		return obs, err
	}
	l, err := NewLoop(LoopOptions{Controller: New(Config{}), Observer: observe, Actuator: act})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	time.Sleep(time.Second) // estimates of 100 MiB/s
	var total, worst, compute, computeWorst time.Duration
	n := 0
	for b.Loop() {
		for len(act.denied) > 0 {
			<-act.denied
		}
		mu.Lock()
		sampled = time.Time{}
		mu.Unlock()
		red := time.Now()
		w.setAvail(300 * MiB)
		<-act.denied
		at := time.Now()
		mu.Lock()
		c := at.Sub(sampled)
		mu.Unlock()
		total += at.Sub(red)
		worst = max(worst, at.Sub(red))
		compute += c
		computeWorst = max(computeWorst, c)
		n++
		w.setAvail(testBudget)
		time.Sleep(1300 * time.Millisecond) // back to green, allowed, fresh estimates
	}
	cancel()
	<-done
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(total)/float64(n), "ms-red-to-deny")
	b.ReportMetric(ms(worst), "ms-red-to-deny-worst")
	b.ReportMetric(ms(compute)/float64(n), "ms-sample-to-deny")
	b.ReportMetric(ms(computeWorst), "ms-sample-to-deny-worst")
}

// BenchmarkTickRedToDeny1000 is the compute part of that delay: one Loop
// iteration over 1,000 sandboxes that turns red and publishes the denials.
func BenchmarkTickRedToDeny1000(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		w := newBenchWorld(1000, 60<<30)
		clk := clocktest.NewManual(time.Unix(1_700_000_000, 0))
		act := newFakeActuator()
		l, err := NewLoop(LoopOptions{Controller: New(Config{}), Actuator: act, Clock: clk,
			Observer: func(context.Context) (Observation, error) { w.advance(); return w.obs, nil }})
		if err != nil {
			b.Fatal(err)
		}
		for range 5 {
			clk.Advance(tick)
			l.Tick(ctx)
		}
		w.obs.Available = 5 << 30
		clk.Advance(tick)
		b.StartTimer()
		d, _ := l.Tick(ctx)
		b.StopTimer()
		if d.Pressure != Red || len(d.Denied) == 0 {
			b.Fatalf("pressure %v denied %d, want red with denials", d.Pressure, len(d.Denied))
		}
		b.StartTimer()
	}
}
