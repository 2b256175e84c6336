package admission

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/predict"
)

const mib = 1 << 20

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time       { return c.t }
func (c *fakeClock) step(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock                { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func desc(avg, peak int64) predict.Descriptor {
	return predict.Descriptor{PredAvg: avg * mib, PredPeak: peak * mib}
}

const plenty = math.MaxInt64 / 2 // physical headroom that never binds

// fill admits an action holding exactly level MiB into an idle Admitter.
func fill(t *testing.T, a *Admitter, level int64) *Ticket {
	t.Helper()
	tk := a.Enqueue(Request{ID: "filler", Descriptor: desc(level, level)})
	if got := a.Schedule(plenty, 0); len(got) != 1 || got[0] != tk {
		t.Fatalf("filler of %d MiB not admitted", level)
	}
	return tk
}

func TestChargeInterpolation(t *testing.T) {
	tests := []struct {
		name      string
		mwindow   int64 // MiB
		level     int64 // MiB admitted before
		avg, peak int64
		want      int64 // MiB
	}{
		{"empty: average", 1000, 0, 100, 300, 100},
		{"quarter", 1000, 250, 100, 300, 150},
		{"half", 1000, 500, 100, 300, 200},
		{"at window: peak", 1000, 1000, 100, 300, 300},
		{"above window clamps to peak", 400, 1000, 100, 300, 300},
		{"avg above peak still interpolates", 1000, 500, 300, 100, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			a := New(Config{Budget: 100000 * mib, MWindow: tc.mwindow * mib, HeavyThreshold: 50000 * mib}, c.now)
			if tc.level > 0 {
				fill(t, a, tc.level)
			}
			tk := a.Enqueue(Request{ID: "x", Descriptor: desc(tc.avg, tc.peak)})
			if got := a.Schedule(plenty, 0); len(got) != 1 {
				t.Fatalf("not admitted")
			}
			if got := tk.Charge(); got != tc.want*mib {
				t.Errorf("charge %d MiB, want %d MiB", got/mib, tc.want)
			}
			if s := a.Snapshot(); s.Level != (tc.level+tc.want)*mib {
				t.Errorf("level %d MiB, want %d", s.Level/mib, tc.level+tc.want)
			}
		})
	}
}

func TestNoHeadOfLineBlocking(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 1000 * mib, HeavyThreshold: 700 * mib}, c.now)
	fill(t, a, 600)
	heavy := a.Enqueue(Request{ID: "heavy", Descriptor: desc(800, 800)})
	c.step(time.Second)
	bigLight := a.Enqueue(Request{ID: "big-light", Descriptor: desc(500, 500)})
	c.step(time.Second)
	small := a.Enqueue(Request{ID: "small", Descriptor: desc(50, 50)})
	got := a.Schedule(plenty, 0)
	if len(got) != 1 || got[0] != small {
		t.Fatalf("admitted %v, want only the small action behind the ones that do not fit", ids(got))
	}
	if heavy.State() != Waiting || bigLight.State() != Waiting {
		t.Errorf("heavy %v, big light %v: want both waiting", heavy.State(), bigLight.State())
	}
}

func TestHeavyClassification(t *testing.T) {
	a := New(Config{Budget: 8192 * mib}, newClock().now) // HeavyThreshold defaults to 1024 MiB
	tests := []struct {
		name  string
		d     predict.Descriptor
		heavy bool
	}{
		{"small", desc(10, 100), false},
		{"peak at threshold", desc(10, 1024), true},
		{"risky", predict.Descriptor{PredPeak: 10 * mib, HeavyRisk: 0.5}, true},
		{"low risk", predict.Descriptor{PredPeak: 10 * mib, HeavyRisk: 0.49}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.Enqueue(Request{ID: tc.name, Descriptor: tc.d}).Heavy(); got != tc.heavy {
				t.Errorf("heavy = %v, want %v", got, tc.heavy)
			}
		})
	}
}

func TestReleaseExactlyOnce(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 1000 * mib}, c.now)
	keep := fill(t, a, 100)
	tk := a.Enqueue(Request{ID: "x", Descriptor: desc(200, 200)})
	if err := a.Release(tk); !errors.Is(err, ErrNotAdmitted) {
		t.Errorf("releasing a waiting ticket: %v, want ErrNotAdmitted", err)
	}
	a.Schedule(plenty, 0)
	if err := a.Release(tk); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(tk); !errors.Is(err, ErrReleased) {
		t.Errorf("second release: %v, want ErrReleased", err)
	}
	if s := a.Snapshot(); s.Level != keep.Charge() || s.Running != 1 {
		t.Errorf("after double release level %d MiB running %d, want %d MiB and 1", s.Level/mib, s.Running, keep.Charge()/mib)
	}
	if a.Cancel(keep) {
		t.Error("cancelled an admitted ticket")
	}
}

func TestPhysicalCheck(t *testing.T) {
	tests := []struct {
		name     string
		headroom int64 // MiB
		want     int   // admitted of three 300 MiB actions
	}{
		{"plenty", 10000, 3},
		{"room for two", 650, 2},
		{"room for one", 300, 1},
		{"short", 299, 0},
		{"negative", -5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Config{Budget: 10000 * mib}, newClock().now)
			for i := range 3 {
				a.Enqueue(Request{ID: fmt.Sprint(i), Descriptor: desc(300, 300)})
			}
			if got := a.Schedule(tc.headroom*mib, 0); len(got) != tc.want {
				t.Errorf("admitted %d, want %d", len(got), tc.want)
			}
		})
	}
}

// TestLightLane: light actions may use the margin the caller allows them;
// heavy ones never do, and the lane is shared by the light actions
// admitted in one call.
func TestLightLane(t *testing.T) {
	tests := []struct {
		name               string
		headroom, lane     int64 // MiB
		light, heavy, want int   // 10 MiB light and 300 MiB heavy actions queued; admitted
	}{
		{"no lane, no headroom", 0, 0, 3, 0, 0},
		{"lane fits two", 0, 25, 3, 0, 2},
		{"lane plus headroom fits three", 5, 25, 3, 0, 3},
		{"negative headroom eats the lane", -20, 25, 3, 0, 0},
		{"heavy stays out of the lane", 0, 1000, 0, 1, 0},
		{"heavy fits without the lane", 300, 1000, 0, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Config{Budget: 10000 * mib, HeavyThreshold: 100 * mib}, newClock().now)
			for i := range tc.light {
				a.Enqueue(Request{ID: fmt.Sprint("l", i), Descriptor: desc(10, 10)})
			}
			for i := range tc.heavy {
				a.Enqueue(Request{ID: fmt.Sprint("h", i), Descriptor: desc(300, 300)})
			}
			if got := a.Schedule(tc.headroom*mib, tc.lane*mib); len(got) != tc.want {
				t.Errorf("admitted %d, want %d", len(got), tc.want)
			}
		})
	}
}

func TestWaitingHoldsNoCharge(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 1000 * mib}, c.now)
	for i := range 5 {
		a.Enqueue(Request{ID: fmt.Sprint(i), Descriptor: desc(400, 400)})
	}
	if s := a.Snapshot(); s.Level != 0 || len(s.Light)+len(s.Heavy) != 5 {
		t.Fatalf("before scheduling: level %d, %d queued", s.Level, len(s.Light)+len(s.Heavy))
	}
	got := a.Schedule(plenty, 0)
	var sum int64
	for _, tk := range got {
		sum += tk.Charge()
	}
	if s := a.Snapshot(); s.Level != sum || len(got) == 0 || len(got) == 5 {
		t.Errorf("level %d MiB with %d admitted holding %d MiB", s.Level/mib, len(got), sum/mib)
	}
}

func TestOversizedActionRunsAlone(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 1000 * mib}, c.now)
	big := a.Enqueue(Request{ID: "big", Descriptor: desc(3000, 5000)})
	if got := a.Schedule(plenty, 0); len(got) != 1 || big.Charge() != 1000*mib {
		t.Fatalf("oversized action: admitted %v with charge %d MiB, want charge = budget", ids(got), big.Charge()/mib)
	}
	a.Enqueue(Request{ID: "small", Descriptor: desc(1, 1)})
	if got := a.Schedule(plenty, 0); len(got) != 0 {
		t.Errorf("admitted %v next to a full-budget action", ids(got))
	}
}

func ids(ts []*Ticket) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Request().ID)
	}
	return out
}

// TestPhysicalCheckUsesPeaks: at a low water level charges sit near the
// average, but two actions whose predicted peaks do not fit the physical
// headroom together are not admitted in the same round.
func TestPhysicalCheckUsesPeaks(t *testing.T) {
	c := newClock()
	a := New(Config{Budget: 1000 * mib}, c.now)
	x := a.Enqueue(Request{ID: "x", Descriptor: desc(250, 600)})
	y := a.Enqueue(Request{ID: "y", Descriptor: desc(250, 600)})
	got := a.Schedule(900*mib, 0)
	if len(got) != 1 || got[0] != x {
		t.Fatalf("admitted %d tickets, want only x (peaks 600+600 > 900 MiB headroom)", len(got))
	}
	if x.Charge() >= 600*mib {
		t.Errorf("x charged %d MiB: the logical charge should stay interpolated", x.Charge()/mib)
	}
	if y.State() != Waiting {
		t.Errorf("y is %v, want waiting", y.State())
	}
}
