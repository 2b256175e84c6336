package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Generate makes n workflows of a kind (swe, science, rl, or one of them with
// RealSuffix: see realShape), deterministic for a seed: the same arguments
// always give the same workflows, and workflow i does not depend on n. Every action is a Mem profile with a Class, a
// realistic Command and Recorded values equal to the profile.
//
// Per action: the wait is drawn from the calibrated waits; the action is
// heavy with the kind's heavy share; its class is drawn in proportion to the
// calibrated counts of that (light or heavy) population; peak and duration
// are drawn with one uniform from the class population's quantiles (so larger
// peaks go with longer durations); with the calibrated retain share it
// retains memory (at most its peak), held, as the importer represents what
// the traces show, by a background process with the calibrated background
// share (the part of the retain draws where a process outlived the call)
// and otherwise as files in the workspace (page cache: the sandbox stays
// restart-safe). Then the Options
// scale and clamp. Kind rl draws one skeleton and gives every workflow its
// waits, durations, classes and heavy actions (so heavy actions line up),
// redrawing only light peaks and commands, ends with a heavy test (the reward
// computation) and arrives all at 0.
func Generate(name string, n int, seed int64, opts Options) ([]trajectory.Workflow, error) {
	kind, opts, err := realShape(name, opts)
	if err != nil {
		return nil, err
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cal := o.Calibration
	if cal == nil {
		c, err := DefaultCalibration()
		if err != nil {
			return nil, err
		}
		cal = &c
	}
	if cal.Actions == 0 || len(cal.Classes) == 0 {
		return nil, ErrEmptyCalibration
	}
	kp, ok := paramsFor(kind, *cal)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKind, name)
	}
	if o.HeavyShare > 0 {
		kp.heavyShare = o.HeavyShare
	}
	if n <= 0 && o.QPS > 0 && o.Window > 0 {
		n = int(math.Round(o.QPS * o.Window))
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: no workflows asked for (n = %d)", ErrBadOptions, n)
	}
	g := &gen{kind: kind, cal: cal, kp: kp, o: o}
	arr := o.arrivals(n)
	if kind == KindRL {
		arr = make([]float64, n)
	}
	var (
		skeleton trajectory.Workflow
		heavy    []bool
	)
	if kind == KindRL {
		skeleton, heavy = g.workflow(g.rng(seed, -1))
		g.endWithHeavyTest(&skeleton, &heavy, g.rng(seed, -2))
	}
	out := make([]trajectory.Workflow, n)
	for i := range out {
		var w trajectory.Workflow
		switch {
		case o.Duplicate && i > 0:
			w = clone(out[0])
		case kind == KindRL:
			w = g.rollout(skeleton, heavy, g.rng(seed, i))
		default:
			w, _ = g.workflow(g.rng(seed, i))
		}
		w.Version, w.ID, w.Kind, w.Arrival = trajectory.Version, fmt.Sprintf("%s-%03d", name, i), name, arr[i]
		out[i] = w
	}
	return out, nil
}

type gen struct {
	kind string
	cal  *Calibration
	kp   kindParams
	o    Options
}

func (g *gen) rng(seed int64, i int) *rand.Rand {
	var salt uint64
	for _, c := range g.kind {
		salt = salt*131 + uint64(c)
	}
	return rand.New(rand.NewPCG(uint64(seed), salt<<20^uint64(int64(i)+2)))
}

func (g *gen) actionCount(r *rand.Rand) int {
	draw := func() int {
		return max(1, int(math.Round(g.cal.ActionsPerWorkflow.Sample(r.Float64())*g.kp.actionsFactor)))
	}
	n := draw()
	inside := func(n int) bool {
		return n >= g.o.MinActions && (g.o.MaxActions == 0 || n <= g.o.MaxActions)
	}
	for try := 0; try < 64 && !inside(n); try++ {
		n = draw()
	}
	n = max(n, g.o.MinActions)
	if g.o.MaxActions > 0 {
		n = min(n, g.o.MaxActions)
	}
	return n
}

// workflow draws one workflow and says which of its actions are heavy.
func (g *gen) workflow(r *rand.Rand) (trajectory.Workflow, []bool) {
	var (
		w     trajectory.Workflow
		heavy []bool
	)
	for range g.actionCount(r) {
		h := r.Float64() < g.kp.heavyShare
		w.Actions = append(w.Actions, g.action(r, h, ""))
		heavy = append(heavy, h)
	}
	return w, heavy
}

// action draws one action; class forces the class when not "".
func (g *gen) action(r *rand.Rand, heavy bool, class string) trajectory.Action {
	wait := g.cal.WaitS.Sample(r.Float64()) * g.o.TimeScale * g.o.WaitScale
	if g.o.MaxWaitS > 0 {
		wait = min(wait, g.o.MaxWaitS)
	}
	cc, pop := g.pickClass(r, heavy, class)
	u := r.Float64()
	peak, dur := pop.PeakMiB.Sample(u), pop.DurationS.Sample(u)
	name := cc.Class
	if heavy {
		peak, dur = peak*g.kp.peakFactor, dur*g.kp.durFactor
		if g.kp.heavyClass != "" {
			name = g.kp.heavyClass
		}
	} else if to, ok := g.kp.lightRemap[name]; ok {
		name = to
	}
	var retain float64
	u = r.Float64()
	if u < g.cal.RetainShare {
		retain = g.cal.RetainMiB.Sample(r.Float64())
	}
	a := trajectory.Action{Wait: round(wait, 3), Class: name, Command: commandFor(g.kind, name, r)}
	// The background draw reuses the retain draw's uniform (background
	// actions are a part of the retaining ones), so the other draws do
	// not move.
	g.setProfile(&a, peak, dur, retain, u < g.cal.BackgroundShare)
	return a
}

// pickClass draws a class in proportion to its count in the light or heavy
// population; with no heavy actions calibrated it falls back to light.
func (g *gen) pickClass(r *rand.Rand, heavy bool, class string) (ClassCal, Population) {
	popOf := func(c ClassCal) Population {
		if heavy {
			return c.Heavy
		}
		return c.Light
	}
	total := 0
	for _, c := range g.cal.Classes {
		if class == "" || c.Class == class {
			total += popOf(c).Count
		}
	}
	if total == 0 {
		if heavy {
			return g.pickClass(r, false, class)
		}
		return g.pickClass(r, heavy, "")
	}
	k := r.IntN(total)
	for _, c := range g.cal.Classes {
		if class != "" && c.Class != class {
			continue
		}
		if k -= popOf(c).Count; k < 0 {
			return c, popOf(c)
		}
	}
	panic("unreachable")
}

// setProfile scales and clamps, then writes a.Mem and a.Recorded. ramp_s is
// min(duration/3, 2 s) but at least peak/RampMiBps; hold_s is the rest.
// The retained memory is a background process's with background, else
// files_mib (as agentcgroup.Convert writes them).
func (g *gen) setProfile(a *trajectory.Action, peak, dur, retain float64, background bool) {
	peak *= g.o.MemScale
	retain *= g.o.MemScale
	if g.o.MaxPeakMiB > 0 {
		peak = min(peak, g.o.MaxPeakMiB)
	}
	peak = max(1, round(peak, 1))
	retain = min(round(retain, 1), peak)
	dur = max(dur*g.o.TimeScale, g.o.MinDurationS)
	if g.o.MaxDurationS > 0 {
		dur = min(dur, g.o.MaxDurationS)
	}
	ramp := round(max(min(dur/3, 2), peak/g.o.RampMiBps), 3)
	hold := round(max(dur-ramp, 0), 3)
	total := ramp + hold
	a.Mem = &trajectory.MemProfile{PeakMiB: peak, RampS: ramp, HoldS: hold}
	if background {
		a.Mem.RetainMiB, a.Mem.Background = retain, retain > 0
	} else {
		a.Mem.FilesMiB = retain
	}
	avg := 0.0
	if total > 0 {
		avg = peak * (ramp/2 + hold) / total
	}
	a.Recorded = &trajectory.Recorded{DurationS: round(total, 3), AvgMiB: round(avg, 1), PeakMiB: peak}
}

// endWithHeavyTest makes the skeleton's last action a heavy test.
// (replacing its last action when that one is heavy already).
func (g *gen) endWithHeavyTest(w *trajectory.Workflow, heavy *[]bool, r *rand.Rand) {
	last := g.action(r, true, "test")
	if n := len(w.Actions); n > 0 && (*heavy)[n-1] {
		w.Actions[n-1] = last
		return
	}
	w.Actions = append(w.Actions, last)
	*heavy = append(*heavy, true)
}

// rollout copies the skeleton, redrawing light peaks and every command.
func (g *gen) rollout(s trajectory.Workflow, heavy []bool, r *rand.Rand) trajectory.Workflow {
	w := clone(s)
	for i := range w.Actions {
		a := &w.Actions[i]
		a.Command = commandFor(g.kind, a.Class, r)
		if heavy[i] {
			continue
		}
		m := *a.Mem
		_, pop := g.pickClass(r, false, a.Class)
		g.setProfile(a, pop.PeakMiB.Sample(r.Float64()), 0, (m.RetainMiB+m.FilesMiB)/g.o.MemScale, m.Background)
		a.Mem.RampS, a.Mem.HoldS = m.RampS, m.HoldS // keep the skeleton's timing
		a.Recorded.DurationS = round(m.RampS+m.HoldS, 3)
		if d := a.Recorded.DurationS; d > 0 {
			a.Recorded.AvgMiB = round(a.Mem.PeakMiB*(m.RampS/2+m.HoldS)/d, 1)
		}
	}
	return w
}

func clone(w trajectory.Workflow) trajectory.Workflow {
	c := w
	c.Actions = make([]trajectory.Action, len(w.Actions))
	for i, a := range w.Actions {
		if a.Mem != nil {
			m := *a.Mem
			a.Mem = &m
		}
		if a.Recorded != nil {
			rec := *a.Recorded
			a.Recorded = &rec
		}
		c.Actions[i] = a
	}
	return c
}
