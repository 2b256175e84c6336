package predict

import "slices"

// repeatRuns is how many of the latest runs of a repeated command the
// repeat floor takes the median of.
const repeatRuns = 3

// repeatPeak is the peak the repeat floor predicts for the action in ctx:
// the median (the lower of two) of the peaks of the latest repeatRuns
// completed actions of the same workflow that it repeats, that is, that
// have its normalized class and command skeleton (Skeleton: "python -m
// pytest tests/a.py -k x" repeats "python -m pytest tests/b.py"). ok is
// false when there is none, or when the command has no skeleton (a bare
// tool name carries no command text).
//
// Agents re-run the same program within a task (the test suite after each
// edit, the same build, the same install), and a re-run needs about what
// its last runs needed: on the real traces the earlier runs predict a heavy
// action far better than the forest, which has to learn the same relation
// from few training tasks and shrinks every prediction toward its class's
// typical (light) action. The median rather than the last run keeps one
// heavy run (the whole suite) from lifting every later narrow re-run (one
// test) to its peak. See the package's trace tests.
func repeatPeak(ctx ActionContext) (peak int64, ok bool) {
	skel := Skeleton(ctx.Command)
	if skel == "" {
		return 0, false
	}
	cls := NormalizeClass(ctx.Class)
	var runs []int64
	for i := len(ctx.History) - 1; i >= 0 && len(runs) < repeatRuns; i-- {
		c := ctx.History[i]
		if NormalizeClass(c.Class) == cls && Skeleton(c.Command) == skel {
			runs = append(runs, c.PeakBytes)
		}
	}
	if len(runs) == 0 {
		return 0, false
	}
	slices.Sort(runs)
	return runs[(len(runs)-1)/2], true
}
