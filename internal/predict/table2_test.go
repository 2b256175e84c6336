package predict

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

// batchDir is the second real trace set: 23 runs of 18 tasks in an older
// layout without command text (see /work/shared/traces/README.md).
const batchDir = "../../../shared/traces/agentcgroup-batch18"

// table2Lines are admission's heavy lines at the 512 MiB and 1 GiB budgets
// (budget/8): the held-out haiku tasks have 8-21 and 0-7 heavy actions at
// them, enough to count when pooled over the five splits.
var table2Lines = []int64{64 * mib, 128 * mib}

// pooled accumulates a predictor's absolute peak errors and admission's
// heavy confusion over several test sets.
type pooled struct {
	absMiB float64
	n      int
	heavy  []confusion // per table2Lines
}

func (p *pooled) add(pred Predictor, test []Example) {
	if p.heavy == nil {
		p.heavy = make([]confusion, len(table2Lines))
	}
	for _, e := range test {
		d := pred.Predict(e.Ctx)
		p.absMiB += toMiB(max(d.PredPeak-e.PeakBytes, e.PeakBytes-d.PredPeak))
		p.n++
		for i, l := range table2Lines {
			p.heavy[i].add(e.PeakBytes >= l, d.PredPeak >= l || d.HeavyRisk >= AdmissionHeavyRisk)
		}
	}
}

func (p *pooled) mae() float64 { return p.absMiB / float64(p.n) }

func (p *pooled) recall(i int) float64 {
	c := p.heavy[i]
	return percent(c.tp, c.tp+c.fn)
}

func (p *pooled) precision(i int) float64 {
	c := p.heavy[i]
	return percent(c.tp, c.tp+c.fp)
}

// table2Set is static, history-only and current scored on some test sets.
type table2Set struct{ static, history, current pooled }

func (s *table2Set) add(t *testing.T, train, test []Example, seed uint64) {
	t.Helper()
	st, err := Train(train, TrainConfig{FeatureSet: FeatureSetStatic, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Train(train, TrainConfig{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	s.static.add(st, test)
	s.history.add(NewHistoryOnly(train, 0), test)
	s.current.add(cur, test)
}

func (s *table2Set) log(b *strings.Builder, name string) {
	fmt.Fprintf(b, "%s, %d actions\n", name, s.current.n)
	for _, r := range []struct {
		name string
		p    *pooled
	}{{"static", &s.static}, {"history-only", &s.history}, {"current", &s.current}} {
		fmt.Fprintf(b, "  %-13s MAE %5.1f MiB", r.name, r.p.mae())
		for i, l := range table2Lines {
			fmt.Fprintf(b, "  >=%d MiB recall %5.1f %% precision %5.1f %%", l/mib, r.p.recall(i), r.p.precision(i))
		}
		b.WriteByte('\n')
	}
}

// loadBothTraceSets loads the haiku and batch18 trace sets for the trace
// evaluations, or skips under -short or -race (or without the traces).
func loadBothTraceSets(t *testing.T) (haiku, batch []Example) {
	t.Helper()
	if testing.Short() || raceEnabled {
		t.Skip("-short or -race: skipping the trace evaluation (pure computation, run it without -race)")
	}
	return loadTraceExamples(t, tracesDir), loadTraceExamples(t, batchDir)
}

// loadTraceExamples imports an AgentCgroup directory with every attempt of
// a task under the task's id, so that a split never puts two runs of one
// task on both sides.
func loadTraceExamples(t *testing.T, dir string) []Example {
	t.Helper()
	wfs, _, err := agentcgroup.Import(dir)
	if _, serr := os.Stat(dir); serr != nil {
		t.Skipf("AgentCgroup traces not available at %s: %v", dir, serr)
	} else if err != nil {
		t.Fatal(err)
	}
	for i := range wfs {
		if j := strings.LastIndex(wfs[i].ID, ".attempt_"); j > 0 {
			wfs[i].ID = wfs[i].ID[:j]
		}
	}
	return ExamplesFromWorkflows(wfs)
}

// table2Splits is how many 70/30 task splits of haiku the Table 2 test
// pools: one split holds 14 tasks and 0-21 heavy actions, and whether
// current beats static on it depends on which tasks it drew (seeds 1-5 and
// 16-20 gave pooled MAE ratios 0.83 and 1.15 for the rule the test first
// measured).
const table2Splits = 20

// TestCurrentBeatsBaselinesOnTraces is the Table 2 comparison on held-out
// tasks of the real traces (table2Splits 70/30 splits of haiku by task,
// pooled; five of batch18) and on the other trace set (trained on batch18,
// tested on haiku). Where the test actions carry command text, current must
// beat static and history-only on MAE by a tenth and on admission's heavy
// recall at both lines by 8 points and a factor of two; per split, beat
// static's MAE on three splits in four and never exceed it by more than 15
// %. batch18 has no command text: there current is held only to static's MAE
// (within 5 %), the tie it reaches; history-only recalls more of its heavy
// actions (see bench/results/predict.md).
func TestCurrentBeatsBaselinesOnTraces(t *testing.T) {
	haiku, batch := loadBothTraceSets(t)
	var b strings.Builder
	var heldH, heldB, cross table2Set
	beats, worst := 0, 0.0
	for seed := uint64(1); seed <= table2Splits; seed++ {
		var one table2Set
		train, test := SplitByTask(haiku, 0.3, seed)
		one.add(t, train, test, seed)
		heldH.add(t, train, test, seed)
		one.log(&b, fmt.Sprintf("haiku split %d", seed))
		if one.current.mae() < one.static.mae() {
			beats++
		}
		worst = max(worst, one.current.mae()/one.static.mae())
		if seed <= 5 {
			train, test = SplitByTask(batch, 0.3, seed)
			heldB.add(t, train, test, seed)
		}
	}
	cross.add(t, batch, haiku, 1)
	heldH.log(&b, fmt.Sprintf("haiku held-out, %d splits pooled (current's MAE below static's on %d, at worst %.2fx static's)",
		table2Splits, beats, worst))
	cross.log(&b, "trained on batch18, tested on haiku")
	heldB.log(&b, "batch18 held-out, five splits pooled")
	t.Log("\n" + b.String())

	for _, c := range []struct {
		name string
		s    *table2Set
	}{{"haiku held-out", &heldH}, {"batch18 -> haiku", &cross}} {
		cur, st, hist := &c.s.current, &c.s.static, &c.s.history
		if cur.mae() > 0.9*st.mae() || cur.mae() > 0.9*hist.mae() {
			t.Errorf("%s: current MAE %.1f MiB, want 10 %% below static's %.1f and history-only's %.1f",
				c.name, cur.mae(), st.mae(), hist.mae())
		}
		for i, l := range table2Lines {
			base := max(st.recall(i), hist.recall(i))
			if cur.recall(i) < base+8 || cur.recall(i) < 2*base {
				t.Errorf("%s: heavy recall at %d MiB: current %.1f %%, want 8 points above and twice the better of static's %.1f and history-only's %.1f",
					c.name, l/mib, cur.recall(i), st.recall(i), hist.recall(i))
			}
		}
	}
	if beats < table2Splits*3/4 || worst > 1.15 {
		t.Errorf("current MAE below static's on %d of %d haiku splits, at worst %.2f times static's; want at least %d and at most 1.15",
			beats, table2Splits, worst, table2Splits*3/4)
	}
	if heldB.current.mae() > 1.05*heldB.static.mae() {
		t.Errorf("batch18 held-out: current MAE %.1f MiB, want within 5 %% of static's %.1f", heldB.current.mae(), heldB.static.mae())
	}
}
