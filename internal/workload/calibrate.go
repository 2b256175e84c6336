package workload

import (
	"sort"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// HeavyMiB is the recorded peak at or above which an action counts as heavy
// when calibrating (about the 94th percentile of the AgentCgroup actions).
const HeavyMiB = 50

// SandboxClasses are the classes that run in the sandbox and that generated
// workflows contain. Other classes in traces (todowrite, task, websearch,
// webfetch, bashoutput, killshell, ...) are harness-side: Calibrate folds
// their time into the next sandbox action's wait.
var SandboxClasses = []string{"bash", "build", "edit", "install", "read", "run", "search", "test"}

// Population summarizes the light or the heavy actions of one class.
type Population struct {
	Count     int  `json:"count"`
	PeakMiB   Dist `json:"peak_mib"`
	DurationS Dist `json:"duration_s"`
}

// ClassCal is the calibration of one action class.
type ClassCal struct {
	Class string     `json:"class"`
	Light Population `json:"light"`
	Heavy Population `json:"heavy"`
}

// Calibration holds the distributions the generator samples.
type Calibration struct {
	Source             string  `json:"source"`
	Workflows          int     `json:"workflows"`
	Actions            int     `json:"actions"` // sandbox actions after folding
	HeavyMiB           float64 `json:"heavy_mib"`
	HeavyShare         float64 `json:"heavy_share"` // fraction of actions with peak >= HeavyMiB
	ActionsPerWorkflow Dist    `json:"actions_per_workflow"`
	WaitS              Dist    `json:"wait_s"`       // model wait before an action
	RetainShare        float64 `json:"retain_share"` // fraction of actions that retain memory
	// BackgroundShare is the fraction of actions whose retained memory a
	// process outliving the call holds (the importer's evidence:
	// Background); the rest of the retained memory is page cache and the
	// harness, restart-safe (FilesMiB). At most RetainShare.
	BackgroundShare float64    `json:"background_share"`
	RetainMiB       Dist       `json:"retain_mib"` // retain_mib of those actions
	Classes         []ClassCal `json:"classes"`    // sorted by class
}

// Calibrate derives a Calibration from imported workflows (for example
// agentcgroup.Import of the AgentCgroup traces). Per workflow, actions of
// classes outside SandboxClasses are folded into the wait of the next
// sandbox action (their wait and duration are added to it). Then:
// actions_per_workflow counts sandbox actions; wait_s is their waits; an
// action is heavy when its PeakMiB is >= HeavyMiB; per class, light and heavy
// actions get their own peak and duration distributions (duration is
// DurationS, peak is PeakMiB); retain_share is the fraction of actions whose
// RetainedMiB is > 0 and retain_mib their distribution; background_share
// the fraction whose retained memory a background process holds.
func Calibrate(wfs []trajectory.Workflow, source string) Calibration {
	sandbox := map[string]bool{}
	for _, c := range SandboxClasses {
		sandbox[c] = true
	}
	type pop struct{ peak, dur []float64 }
	light, heavy := map[string]*pop{}, map[string]*pop{}
	var counts, waits, retains []float64
	cal := Calibration{Source: source, HeavyMiB: HeavyMiB}
	nHeavy, nBackground := 0, 0
	for _, w := range wfs {
		n, carry := 0, 0.0
		for _, a := range w.Actions {
			if !sandbox[a.Class] {
				carry += a.Wait + a.DurationS()
				continue
			}
			n++
			waits = append(waits, a.Wait+carry)
			carry = 0
			m := light
			if a.PeakMiB() >= HeavyMiB {
				m = heavy
				nHeavy++
			}
			p := m[a.Class]
			if p == nil {
				p = &pop{}
				m[a.Class] = p
			}
			p.peak = append(p.peak, a.PeakMiB())
			p.dur = append(p.dur, a.DurationS())
			if r := a.RetainedMiB(); r > 0 {
				retains = append(retains, r)
				if a.Mem != nil && a.Mem.Background {
					nBackground++
				}
			}
		}
		if n > 0 {
			cal.Workflows++
			cal.Actions += n
			counts = append(counts, float64(n))
		}
	}
	if cal.Actions == 0 {
		return cal
	}
	cal.HeavyShare = round(float64(nHeavy)/float64(cal.Actions), 4)
	cal.RetainShare = round(float64(len(retains))/float64(cal.Actions), 4)
	cal.BackgroundShare = round(float64(nBackground)/float64(cal.Actions), 4)
	cal.ActionsPerWorkflow, cal.WaitS, cal.RetainMiB = NewDist(counts), NewDist(waits), NewDist(retains)
	for _, c := range SandboxClasses {
		cc := ClassCal{Class: c}
		if p := light[c]; p != nil {
			cc.Light = Population{Count: len(p.peak), PeakMiB: NewDist(p.peak), DurationS: NewDist(p.dur)}
		}
		if p := heavy[c]; p != nil {
			cc.Heavy = Population{Count: len(p.peak), PeakMiB: NewDist(p.peak), DurationS: NewDist(p.dur)}
		}
		if cc.Light.Count+cc.Heavy.Count > 0 {
			cal.Classes = append(cal.Classes, cc)
		}
	}
	sort.Slice(cal.Classes, func(i, j int) bool { return cal.Classes[i].Class < cal.Classes[j].Class })
	return cal
}
