package live

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/units"
)

// lineDomain is a holdDomain whose hold needs the freezing (cgroup v2),
// with an above-the-line flag the test sets.
type lineDomain struct {
	holdDomain
	freezes bool
	mu      *sync.Mutex
	above   *bool
}

func (d lineDomain) HoldFreezes() bool { return d.freezes }
func (d lineDomain) AboveHoldLine() (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.above, nil
}

// TestFreezingHoldWiring: on a domain whose hold needs the freezing (v2),
// the gate loop reads the line, pauses the sandbox that grew while tasks
// wait, even though the gate (green) allows it, and resumes it once the
// domain is below the line; on a domain whose hold does not (v1) it does
// not pause it.
func TestFreezingHoldWiring(t *testing.T) {
	for _, freezes := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			p := lookup(t, "gate", policy.Options{Budget: units.GiB, Params: map[string]string{"hold": "10s"}})
			dom := &fakeDomain{avail: units.GiB}
			var mu sync.Mutex
			above := false
			be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{},
				mem: map[string]int64{"s": 10 * units.MiB}, cpu: map[string]time.Duration{}, live: []string{"s"}}
			env := controller.Env{Clock: clock.Real{}, Budget: units.GiB, Backend: be, Live: be.liveSandboxes, Emit: func(controller.Event) {},
				Domain: lineDomain{holdDomain: holdDomain{dom}, freezes: freezes, mu: &mu, above: &above}}
			if err := p.Start(t.Context(), env); err != nil {
				t.Fatal(err)
			}
			paused := func() bool {
				be.mu.Lock()
				defer be.mu.Unlock()
				return be.paused["s"]
			}
			time.Sleep(300 * time.Millisecond)
			synctest.Wait()
			be.mu.Lock()
			be.mem["s"] = 100 * units.MiB // grew past the line
			be.mu.Unlock()
			mu.Lock()
			above = true
			mu.Unlock()
			dom.set(true)
			time.Sleep(150 * time.Millisecond)
			synctest.Wait()
			if paused() != freezes {
				t.Fatalf("freezing hold %v: the grower paused %v", freezes, paused())
			}
			dom.set(false)
			time.Sleep(300 * time.Millisecond)
			synctest.Wait()
			if freezes && !paused() {
				t.Fatal("thawed while the domain is above the line")
			}
			mu.Lock()
			above = false
			mu.Unlock()
			time.Sleep(300 * time.Millisecond)
			synctest.Wait()
			if paused() {
				t.Fatal("still paused below the line")
			}
			if err := p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got, want := p.Machine().HoldStats().Froze, map[bool]uint64{true: 1, false: 0}[freezes]; got != want {
				t.Errorf("froze %d, want %d", got, want)
			}
		})
	}
}
