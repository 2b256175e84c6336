package predict

// ClassPrior predicts a fixed peak per action class: what a predictor
// starts from before it has seen a measurement of its own (the daemon's
// first actions). Peaks come from elsewhere (the composition root derives
// them from the workload calibration), so they should be a high quantile
// of each class: a prior that under-predicts admits a heavy action beside
// another and the OOM killer settles it. The average is predicted equal to
// the peak, the conservative charge.
type ClassPrior struct {
	Peak    map[string]int64 // normalized class -> peak in bytes
	Default int64            // a class missing from Peak
	// Reclass, when set, maps the command of a generic shell action (class
	// "bash" or "other") to a finer class before Peak is looked up: a
	// harness that sends every command as "bash" still gets the test prior
	// for "pytest -x". nil keeps the class.
	Reclass        func(command string) string
	HeavyThreshold int64 // 0: DefaultHeavyThreshold
}

var _ Predictor = ClassPrior{}

// Name is "class-prior".
func (ClassPrior) Name() string { return "class-prior" }

// Predict returns the prior of the action's class.
func (c ClassPrior) Predict(ctx ActionContext) Descriptor {
	cls := NormalizeClass(ctx.Class)
	look := cls
	if c.Reclass != nil && (cls == "bash" || cls == "other") {
		look = NormalizeClass(c.Reclass(ctx.Command))
	}
	peak, ok := c.Peak[look]
	if !ok {
		peak = c.Default
	}
	d := Descriptor{Class: cls, PredAvg: peak, PredPeak: peak, PredP90: peak, Priority: priorityOf(ctx.Hints)}
	if heavyPeak(peak, c.HeavyThreshold) {
		d.HeavyRisk = 1
	}
	return d
}
