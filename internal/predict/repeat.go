package predict

// repeatPeak is the peak of the latest completed action of the same
// workflow that repeats the action in ctx: same normalized class and same
// command skeleton (Skeleton: "python -m pytest tests/a.py -k x" repeats
// "python -m pytest tests/b.py"). ok is false when there is none, or when
// the command has no skeleton (a bare tool name carries no command text).
//
// Agents re-run the same program within a task (the test suite after each
// edit, the same build, the same install), and a re-run needs about what
// its last run needed: on the real traces that one earlier peak predicts a
// heavy action far better than the forest, which has to learn the same
// relation from few training tasks and shrinks every prediction toward its
// class's typical (light) action. See the package's trace tests.
func repeatPeak(ctx ActionContext) (peak int64, ok bool) {
	skel := Skeleton(ctx.Command)
	if skel == "" {
		return 0, false
	}
	cls := NormalizeClass(ctx.Class)
	for i := len(ctx.History) - 1; i >= 0; i-- {
		c := ctx.History[i]
		if NormalizeClass(c.Class) == cls && Skeleton(c.Command) == skel {
			return c.PeakBytes, true
		}
	}
	return 0, false
}
