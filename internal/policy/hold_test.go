package policy

import (
	"testing"
	"time"
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
		{name: "a long run at its peak keeps the hold for minutes", steps: []step{
			{0, true, true, HoldBegan}, {30000, true, true, HoldNone}, {120000, true, true, HoldNone}, {150000, false, true, HoldResolved},
		}, stats: HoldStats{Holds: 1, Resolved: 1, Held: 150 * time.Second}},
		{name: "progress does not hold it past the longest wait", steps: []step{
			{0, true, true, HoldBegan}, {100000, true, true, HoldNone}, {299999, true, true, HoldNone}, {300000, true, true, HoldRelease},
		}, stats: HoldStats{Holds: 1, Released: 1, Held: 300 * time.Second}},
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

// TestHoldParams: hold= sets the hold's timeout (off disarms it) and
// hold-max= the machine's longest wait; bad values are errors.
func TestHoldParams(t *testing.T) {
	for _, tc := range []struct {
		key, val string
		want     time.Duration // hold= : the timeout; hold-max=: the machine's MaxWait
		wantErr  bool
	}{
		{key: "hold", val: "off", want: -1},
		{key: "hold", val: "2s", want: 2 * time.Second},
		{key: "hold", val: "0s", wantErr: true},
		{key: "hold", val: "soon", wantErr: true},
		{key: "hold-max", val: "90s", want: 90 * time.Second},
		{key: "hold-max", val: "0s", wantErr: true},
		{key: "hold-max", val: "off", wantErr: true},
	} {
		t.Run(tc.key+"="+tc.val, func(t *testing.T) {
			var c Config
			var hold time.Duration
			err := ApplyTenonParams(&c, &hold, map[string]string{tc.key: tc.val})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			got := hold
			if tc.key == "hold-max" {
				c.Name, c.Hold = "gate", 3*time.Second
				m, err := NewMachine(c)
				if err != nil {
					t.Fatal(err)
				}
				got = m.hold.MaxWait
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHoldTimeoutDefault: the gate policies' hold waits the gate's DMax on
// the replay's clock unless configured, and hold=off leaves it disarmed.
func TestHoldTimeoutDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hold  time.Duration
		scale float64
		want  time.Duration
	}{
		{name: "real time", scale: 1, want: 3 * time.Second},
		{name: "compressed", scale: 0.5, want: 2 * time.Second}, // 1.5 s, raised to MinHold
		{name: "compressed, long DMax", hold: 0, scale: 0.8, want: 2400 * time.Millisecond},
		{name: "configured", hold: time.Second, scale: 0.25, want: time.Second},
		{name: "off", hold: -1, scale: 1, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := map[string]string{}
			switch {
			case tc.hold < 0:
				params["hold"] = "off"
			case tc.hold > 0:
				params["hold"] = tc.hold.String()
			}
			m, err := Build("gate", Options{Budget: 1 << 30, Params: params, TimeScale: tc.scale})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Config().Hold; got != tc.want || m.HoldArmed() != (tc.want > 0) {
				t.Errorf("hold = %v (armed %v), want %v", got, m.HoldArmed(), tc.want)
			}
		})
	}
}

// TestHeldBudgetFollowsHold: the gate runs on a held budget exactly while
// the machine runs the OOM hold.
func TestHeldBudgetFollowsHold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		params  map[string]string
		disable bool
		want    bool
	}{
		{name: "on by default", want: true},
		{name: "asked for, hold armed", params: map[string]string{"held-budget": "on"}, want: true},
		{name: "turned off", params: map[string]string{"held-budget": "off"}},
		{name: "asked for, hold off by parameter", params: map[string]string{"held-budget": "on", "hold": "off"}},
		{name: "asked for, host without a hold", params: map[string]string{"held-budget": "on"}, disable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Build("gate", Options{Budget: 1 << 30, Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			if tc.disable {
				m.DisableHold()
			}
			if got := m.gate.Config().HeldBudget; got != tc.want {
				t.Errorf("held budget %v (hold armed %v), want %v", got, m.HoldArmed(), tc.want)
			}
		})
	}
}

func TestConfigureHoldMaxWaitCoversTheActionTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		params  map[string]string
		want    func(hold time.Duration) time.Duration
	}{
		{"no action timeout", 0, nil, HoldMaxWait},
		{"a short action timeout", time.Second, nil, HoldMaxWait},
		{"a long action timeout", time.Hour, nil, func(time.Duration) time.Duration { return time.Hour }},
		{"hold-max= wins", time.Hour, map[string]string{"hold-max": "10s"}, func(time.Duration) time.Duration { return 10 * time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Resolve("gate", Options{Budget: 1 << 30, ActionTimeout: tc.timeout, Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Hold <= 0 {
				t.Fatalf("setup: no hold (%v)", cfg.Hold)
			}
			if want := tc.want(cfg.Hold); cfg.HoldMaxWait != want {
				t.Errorf("HoldMaxWait %v, want %v", cfg.HoldMaxWait, want)
			}
		})
	}
}
