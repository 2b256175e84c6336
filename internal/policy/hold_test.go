package policy

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/units"
)

func TestOOMHoldSteps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		ms     int
		under  bool
		moving bool // some sandbox made progress since the previous step
		want   HoldAction
	}
	for _, tc := range []struct {
		name  string
		steps []step
		stats HoldStats
	}{
		{name: "nothing waits", steps: []step{{0, false, true, HoldNone}, {100, false, false, HoldNone}}},
		{name: "a wait that resolves before the timeout", steps: []step{
			{0, true, false, HoldBegan}, {100, true, false, HoldNone}, {2900, true, false, HoldNone}, {3000, false, false, HoldResolved}, {3100, false, false, HoldNone},
		}, stats: HoldStats{Holds: 1, Resolved: 1, Held: 3 * time.Second}},
		{name: "a wait released at the timeout, re-armed once out of OOM", steps: []step{
			{0, true, false, HoldBegan}, {2999, true, false, HoldNone}, {3000, true, false, HoldRelease}, {3100, false, false, HoldRearm}, {3200, false, false, HoldNone},
		}, stats: HoldStats{Holds: 1, Released: 1, Held: 3 * time.Second}},
		{name: "released but still under OOM: re-armed after another timeout", steps: []step{
			{0, true, false, HoldBegan}, {3000, true, false, HoldRelease}, {5999, true, false, HoldNone}, {6000, true, false, HoldRearm}, {6100, true, false, HoldBegan},
		}, stats: HoldStats{Holds: 2, Released: 1, Held: 3 * time.Second}},
		{name: "two waits", steps: []step{
			{0, true, false, HoldBegan}, {500, false, false, HoldResolved}, {600, true, false, HoldBegan}, {700, false, false, HoldResolved},
		}, stats: HoldStats{Holds: 2, Resolved: 2, Held: 600 * time.Millisecond}},
		{name: "others progressing keep the hold past the timeout; released a timeout after they stop", steps: []step{
			{0, true, false, HoldBegan}, {2000, true, true, HoldNone}, {4000, true, true, HoldNone}, {6999, true, false, HoldNone}, {7000, true, false, HoldRelease},
		}, stats: HoldStats{Holds: 1, Released: 1, Held: 7 * time.Second}},
		{name: "others progressing until the wait resolves", steps: []step{
			{0, true, true, HoldBegan}, {5000, true, true, HoldNone}, {9000, true, true, HoldNone}, {9100, false, true, HoldResolved},
		}, stats: HoldStats{Holds: 1, Resolved: 1, Held: 9100 * time.Millisecond}},
		{name: "progress does not hold it past the longest wait", steps: []step{
			{0, true, true, HoldBegan}, {10000, true, true, HoldNone}, {29999, true, true, HoldNone}, {30000, true, true, HoldRelease},
		}, stats: HoldStats{Holds: 1, Released: 1, Held: 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &OOMHold{Timeout: 3 * time.Second, MaxWait: HoldMaxWait(3 * time.Second)}
			for i, s := range tc.steps {
				if got := h.Step(at(s.ms), s.under, s.moving); got != s.want {
					t.Fatalf("step %d (t=%dms under=%v moving=%v) = %v, want %v", i, s.ms, s.under, s.moving, got, s.want)
				}
			}
			if h.Stats() != tc.stats {
				t.Errorf("stats = %+v, want %+v", h.stats, tc.stats)
			}
		})
	}
}

func TestHoldParam(t *testing.T) {
	for _, tc := range []struct {
		val     string
		want    time.Duration
		wantErr bool
	}{
		{val: "off", want: -1},
		{val: "2s", want: 2 * time.Second},
		{val: "0s", wantErr: true},
		{val: "soon", wantErr: true},
	} {
		t.Run(tc.val, func(t *testing.T) {
			var c TenonConfig
			err := ApplyTenonParams(&c, map[string]string{"hold": tc.val})
			if (err != nil) != tc.wantErr {
				t.Fatalf("hold=%s: err = %v, want error %v", tc.val, err, tc.wantErr)
			}
			if err == nil && c.Hold != tc.want {
				t.Errorf("hold=%s: Hold = %v, want %v", tc.val, c.Hold, tc.want)
			}
		})
	}
}

// TestHoldTimeoutDefault: the hold waits the gate's DMax on the replay's
// clock unless configured, and hold=off leaves it disarmed.
func TestHoldTimeoutDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hold  time.Duration
		scale float64
		want  time.Duration
	}{
		{name: "real time", scale: 1, want: 3 * time.Second},
		{name: "compressed", scale: 0.25, want: 750 * time.Millisecond},
		{name: "configured", hold: time.Second, scale: 0.25, want: time.Second},
		{name: "off", hold: -1, scale: 1, want: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewTenon(TenonConfig{Name: "t", Gate: true, Hold: tc.hold, TimeScale: tc.scale})
			if err != nil {
				t.Fatal(err)
			}
			if p.gate.holdTimeout != tc.want {
				t.Errorf("holdTimeout = %v, want %v", p.gate.holdTimeout, tc.want)
			}
		})
	}
}

// fakeHolder is a domain whose under_oom flag the test sets and whose hold
// writes it records.
type fakeHolder struct {
	under  bool
	writes []bool
}

func (f *fakeHolder) Usage() (int64, error)     { return 0, nil }
func (f *fakeHolder) Available() (int64, error) { return 0, nil }
func (f *fakeHolder) SetOOMHold(on bool) error  { f.writes = append(f.writes, on); return nil }
func (f *fakeHolder) UnderOOM() (bool, error)   { return f.under, nil }

// TestGateRunnerHold: the runner arms the hold, releases it to the OOM
// killer after the timeout, re-arms it, logs each step and disarms it when
// the gate stops.
func TestGateRunnerHold(t *testing.T) {
	clk := &stepClock{t: time.Unix(0, 0)}
	dom := &fakeHolder{}
	var events []controller.Event
	env := controller.Env{Clock: clk, Domain: dom, Emit: func(e controller.Event) { events = append(events, e) }}
	g := &gateRunner{holdTimeout: time.Second}
	g.armHold(env)
	for _, s := range []struct {
		ms    int
		under bool
	}{{0, false}, {100, true}, {600, true}, {1100, true}, {1200, false}} {
		clk.t = time.Unix(0, 0).Add(time.Duration(s.ms) * time.Millisecond)
		dom.under = s.under
		g.stepHold(env, "tenon", false)
	}
	if err := g.disarmHold(); err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, true, false}; !slices.Equal(dom.writes, want) {
		t.Errorf("hold writes = %v, want %v (arm, release, re-arm, disarm)", dom.writes, want)
	}
	var reasons []string
	for _, e := range events {
		if e.Kind != controller.EventHold {
			t.Errorf("unexpected event %+v", e)
		}
		reasons = append(reasons, e.Reason)
	}
	if want := []string{"began", "released to the OOM killer", "re-armed"}; !slices.Equal(reasons, want) {
		t.Errorf("events = %q, want %q", reasons, want)
	}
	if st := g.hold.Stats(); st.Holds != 1 || st.Released != 1 || st.Held != time.Second {
		t.Errorf("stats = %+v", st)
	}
}

type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time                       { return c.t }
func (c *stepClock) After(time.Duration) <-chan time.Time { return nil }

// TestGateRunnerProgressed: the runner tells the hold that something made
// progress when any sandbox used at least the minimum CPU time since the
// previous observation; frozen sandboxes and tasks waiting for memory use
// none, and a stray wakeup less than the minimum does not count.
func TestGateRunnerProgressed(t *testing.T) {
	g := &gateRunner{}
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	for i, s := range []struct {
		samples []gate.Sample
		want    bool
	}{
		{samples: []gate.Sample{{ID: "a", CPU: ms(5)}}, want: true}, // first sight, CPU used
		{samples: []gate.Sample{{ID: "a", CPU: ms(5)}}, want: false},
		{samples: []gate.Sample{{ID: "a", CPU: ms(6)}}, want: false}, // below the 5 ms minimum
		{samples: []gate.Sample{{ID: "a", CPU: ms(6)}, {ID: "b"}}, want: false},
		{samples: []gate.Sample{{ID: "a", CPU: ms(6)}, {ID: "b", CPU: ms(5)}}, want: true},
		{samples: []gate.Sample{{ID: "b", CPU: ms(5)}}, want: false},                        // a's read failed once
		{samples: []gate.Sample{{ID: "a", CPU: ms(7)}, {ID: "b", CPU: ms(5)}}, want: false}, // a back: 1 ms since it was last seen
		{samples: []gate.Sample{{ID: "b", CPU: ms(5)}}, want: false},
		{samples: []gate.Sample{{ID: "b", CPU: ms(5)}}, want: false},                       // a forgotten after two misses
		{samples: []gate.Sample{{ID: "a", CPU: ms(8)}, {ID: "b", CPU: ms(5)}}, want: true}, // so it counts from zero
		{samples: nil, want: false},
	} {
		if got := g.progressed(s.samples, ms(5)); got != s.want {
			t.Errorf("observation %d: progressed = %v, want %v", i, got, s.want)
		}
	}
}

// cpuBackend is the fake backend with a CPU clock the test moves: every
// Stats call adds step to the sandbox's CPU time.
type cpuBackend struct {
	*fake.Backend
	mu   sync.Mutex
	cpu  time.Duration
	step time.Duration
}

func (b *cpuBackend) Stats(context.Context, string) (sandbox.Stats, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cpu += b.step
	return sandbox.Stats{Memory: 100 * units.MiB, CPU: b.cpu}, nil
}

// TestGateRunnerHoldFollowsProgress: the running gate feeds the hold what
// the sandboxes' CPU times say. With the domain under OOM throughout, a
// sandbox using CPU keeps the hold past its timeout; with none, the hold is
// released after it.
func TestGateRunnerHoldFollowsProgress(t *testing.T) {
	for _, tc := range []struct {
		name        string
		step        time.Duration // CPU per gate period
		wantRelease bool
	}{
		{name: "a sandbox using CPU keeps the hold", step: 20 * time.Millisecond},
		{name: "a stray 1 ms wakeup does not", step: time.Millisecond, wantRelease: true},
		{name: "nothing progressing: released after the timeout", wantRelease: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				be := &cpuBackend{Backend: fake.New(fake.Options{}), step: tc.step}
				dom := &fakeHolder{under: true}
				var mu sync.Mutex
				var reasons []string
				env := controller.Env{Clock: controller.RealClock{}, Budget: units.GiB, Backend: be, Domain: dom,
					Live: func() []controller.LiveSandbox {
						return []controller.LiveSandbox{{Info: sandbox.Info{ID: "a"}}}
					},
					Emit: func(e controller.Event) {
						if e.Kind == controller.EventHold {
							mu.Lock()
							reasons = append(reasons, e.Reason)
							mu.Unlock()
						}
					}}
				g, err := newGateRunner(gate.Config{})
				if err != nil {
					t.Fatal(err)
				}
				g.holdTimeout = time.Second
				if err := g.start(env, "gate", nil); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Second) // five timeouts, half the longest wait
				if err := g.stop(t.Context()); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if released := slices.Contains(reasons, "released to the OOM killer"); released != tc.wantRelease {
					t.Errorf("hold events %q: released %v, want %v", reasons, released, tc.wantRelease)
				}
			})
		})
	}
}
