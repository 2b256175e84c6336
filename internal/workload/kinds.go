package workload

// Workload kinds.
const (
	KindSWE     = "swe"
	KindScience = "science"
	KindRL      = "rl"
)

// Science assumptions (no ScienceAgentBench resource traces are available, so
// the science kind is the SWE calibration reshaped; see calibration.md):
// tasks are data-driven programs (load a dataset with pandas/scanpy/rdkit,
// featurize, fit, plot), so a workflow has about half as many actions, three
// times the SWE share of heavy actions (at most 50%), every heavy action is a
// "run" of a data-processing program whose peak is 3× and duration 4× a SWE
// heavy action, and light test/build actions become runs.
const (
	ScienceActionsFactor  = 0.5
	ScienceHeavyFactor    = 3.0
	SciencePeakFactor     = 3.0
	ScienceDurationFactor = 4.0
)

// kindParams are how a kind reshapes the calibration.
type kindParams struct {
	actionsFactor float64
	heavyShare    float64
	peakFactor    float64 // for heavy actions
	durFactor     float64 // for heavy actions
	heavyClass    string  // "" keeps the sampled class
	lightRemap    map[string]string
}

func paramsFor(kind string, c Calibration) (kindParams, bool) {
	switch kind {
	case KindSWE, KindRL:
		return kindParams{actionsFactor: 1, heavyShare: c.HeavyShare, peakFactor: 1, durFactor: 1}, true
	case KindScience:
		return kindParams{
			actionsFactor: ScienceActionsFactor,
			heavyShare:    min(0.5, ScienceHeavyFactor*c.HeavyShare),
			peakFactor:    SciencePeakFactor,
			durFactor:     ScienceDurationFactor,
			heavyClass:    "run",
			lightRemap:    map[string]string{"test": "run", "build": "run"},
		}, true
	}
	return kindParams{}, false
}
