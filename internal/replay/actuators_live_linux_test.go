//go:build linux

package replay

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/schedext/schedexttest"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestLiveActuators: TestLivePolicies' workload under the gate alone,
// once per actuator (actuatorPacing), its kills, completions, makespan,
// P50 and denied, paced and frozen times logged for
// bench/results/schedext.md. The gate alone loses workflows here in some
// runs whatever holds its sandboxes, so they are measured, not asserted;
// asserted are the replay's invariants, that a pacer paced every denial
// it got (none frozen for want of pacing), and that the kernel kept the
// sched_ext scheduler loaded.
func TestLiveActuators(t *testing.T) {
	layout := liveLayout(t)
	for _, name := range []string{"freezer", "schedext", "cpu"} {
		t.Run(name, func(t *testing.T) {
			o := liveOpts{pacing: actuatorPacing(t, layout, name)}
			denied := &deniedTimer{since: map[string]float64{}}
			o.events = denied
			wfs := recorded(policyWorkload())
			res, p := liveRunOpts(t, layout, 256*units.MiB, "gate", wfs, -1, o)
			ps := p.Stats().Pacing
			t.Logf("actuator %s: makespan %.1fs P50 %s, %d OOM kills, %d/%d workflows done; gate denials %d, denied %.1fs; paced %.1fs, frozen after the handover %.1fs (%d handovers)",
				name, res.Makespan.Seconds(), fmtP50(res), res.OOMEvents, res.Completed, len(wfs),
				denied.n, denied.total(res.Makespan.Seconds()), ps.Paced.Seconds(), ps.Frozen.Seconds(), ps.HandedOver)
			if ps.FrozenOnly != 0 {
				t.Errorf("%d of %d denials frozen from the start: the %s pacer could not pace them", ps.FrozenOnly, ps.Denials, name)
			}
		})
	}
}

// actuatorPacing is the gate's pacing for the actuator called name: nil
// for the freezer; the sched_ext scheduler or the cgroups' CPU limit,
// skipping t where they cannot run.
func actuatorPacing(t *testing.T, layout *cgroup.Layout, name string) *live.Pacing {
	switch name {
	case "schedext":
		return &live.Pacing{Pacer: schedexttest.Pacer(t, layout)}
	case "cpu":
		p, err := live.NewCPUPacer(layout)
		if err != nil {
			t.Skip(err)
		}
		return &live.Pacing{Pacer: p}
	}
	return nil
}

// fmtP50 is the median workflow latency, an unfinished workflow counting
// as infinite (as report.Summarize has it).
func fmtP50(res *Result) string {
	var lat []float64
	for _, w := range res.Workflows {
		l := math.Inf(1)
		if w.Completed {
			l = w.Latency.Seconds()
		}
		lat = append(lat, l)
	}
	if len(lat) == 0 {
		return "-"
	}
	slices.Sort(lat)
	m := lat[len(lat)/2]
	if len(lat)%2 == 0 {
		m = (lat[len(lat)/2-1] + m) / 2
	}
	if math.IsInf(m, 1) {
		return "DNF"
	}
	return (time.Duration(m * float64(time.Second))).Round(100 * time.Millisecond).String()
}

// deniedTimer reads the event log (JSONL) and sums the time between each
// sandbox's gate deny and its next gate allow.
type deniedTimer struct {
	mu    sync.Mutex
	buf   []byte
	since map[string]float64 // sandbox -> time of its open denial
	sum   float64            // closed denials, seconds
	n     int                // denials
}

func (d *deniedTimer) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.buf = append(d.buf, p...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		var e controller.Event
		if json.Unmarshal(d.buf[:i], &e) == nil {
			d.event(e)
		}
		d.buf = d.buf[i+1:]
	}
}

func (d *deniedTimer) event(e controller.Event) {
	switch {
	case e.Kind == controller.EventPause && strings.HasPrefix(e.Reason, "gate deny"):
		if _, open := d.since[e.Sandbox]; !open {
			d.since[e.Sandbox] = e.T
			d.n++
		}
	case e.Kind == controller.EventResume && strings.HasPrefix(e.Reason, "gate allow"):
		if t0, open := d.since[e.Sandbox]; open {
			d.sum += e.T - t0
			delete(d.since, e.Sandbox)
		}
	}
}

// total is the denied time, denials still open counted until end (s).
func (d *deniedTimer) total(end float64) float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sum
	for _, t0 := range d.since {
		s += max(0, end-t0)
	}
	return s
}
