package harness

import (
	"fmt"
	"io"
	"time"
)

// Pair is one workflow replayed in both modes.
type Pair struct {
	Set      string `json:"set"` // the workload the workflow came from
	Baseline Result `json:"baseline"`
	Intents  Result `json:"intents"`
}

// Totals sums a set of pairs.
type Totals struct {
	Set       string `json:"set"`
	Workflows int    `json:"workflows"`
	// Integrals in MiB·s and harness times, baseline and intents.
	BaseRAM     float64       `json:"baseline_ram_mib_s"`
	IntRAM      float64       `json:"intents_ram_mib_s"`
	BaseBacking float64       `json:"baseline_backing_mib_s"`
	IntBacking  float64       `json:"intents_backing_mib_s"`
	BaseTime    time.Duration `json:"baseline_harness_time_ns"`
	IntTime     time.Duration `json:"intents_harness_time_ns"`
	// RAMReduction and BackingReduction are 1 - intents/baseline;
	// TimeIncrease is intents/baseline - 1.
	RAMReduction     float64 `json:"ram_reduction"`
	BackingReduction float64 `json:"backing_reduction"`
	TimeIncrease     float64 `json:"time_increase"`
	Suspensions      int     `json:"suspensions"`
	MinPagedOut      float64 `json:"paged_out_min"`
	AllVerified      bool    `json:"all_verified"`
}

// Total sums pairs whose Set is set ("" sums all).
func Total(pairs []Pair, set string) Totals {
	t := Totals{Set: set, AllVerified: true}
	if set == "" {
		t.Set = "all"
	}
	for _, p := range pairs {
		if set != "" && p.Set != set {
			continue
		}
		t.Workflows++
		t.BaseRAM += p.Baseline.RAMMiBs
		t.IntRAM += p.Intents.RAMMiBs
		t.BaseBacking += p.Baseline.BackingMiBs
		t.IntBacking += p.Intents.BackingMiBs
		t.BaseTime += p.Baseline.HarnessTime
		t.IntTime += p.Intents.HarnessTime
		t.Suspensions += p.Intents.Suspensions
		if p.Intents.Suspensions > 0 && (t.MinPagedOut == 0 || p.Intents.PagedOut < t.MinPagedOut) {
			t.MinPagedOut = p.Intents.PagedOut
		}
		t.AllVerified = t.AllVerified && p.Baseline.Verified && p.Intents.Verified
	}
	if t.BaseRAM > 0 {
		t.RAMReduction = 1 - t.IntRAM/t.BaseRAM
	}
	if t.BaseBacking > 0 {
		t.BackingReduction = 1 - t.IntBacking/t.BaseBacking
	}
	if t.BaseTime > 0 {
		t.TimeIncrease = float64(t.IntTime)/float64(t.BaseTime) - 1
	}
	return t
}

// WriteTable prints one row per pair and one per total, aligned, for people.
func WriteTable(w io.Writer, pairs []Pair, totals []Totals) {
	fmt.Fprintf(w, "| %-10s | %-34s | %5s | %16s | %16s | %8s | %8s | %10s | %8s | %5s | %8s |\n",
		"set", "workflow", "steps", "RAM MiB·s b→i", "backing MiB·s b→i", "RAM Δ", "back. Δ", "time s b→i", "time Δ", "susp.", "paged")
	fmt.Fprintf(w, "|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", dash(12), dash(36), dash(7), dash(18), dash(18), dash(10), dash(10), dash(12), dash(10), dash(7), dash(10))
	for _, p := range pairs {
		b, i := p.Baseline, p.Intents
		fmt.Fprintf(w, "| %-10s | %-34s | %5d | %7.0f → %6.0f | %7.0f → %6.0f | %7.1f%% | %7.1f%% | %4.1f → %4.1f | %+7.1f%% | %5d | %7.0f%% |\n",
			p.Set, trunc(b.Workflow, 34), b.Steps, b.RAMMiBs, i.RAMMiBs, b.BackingMiBs, i.BackingMiBs,
			-100*reduction(b.RAMMiBs, i.RAMMiBs), -100*reduction(b.BackingMiBs, i.BackingMiBs),
			b.HarnessTime.Seconds(), i.HarnessTime.Seconds(), 100*(i.HarnessTime.Seconds()/b.HarnessTime.Seconds()-1),
			i.Suspensions, 100*i.PagedOut)
	}
	for _, t := range totals {
		fmt.Fprintf(w, "| %-10s | %-34s | %5s | %7.0f → %6.0f | %7.0f → %6.0f | %7.1f%% | %7.1f%% | %4.0f → %4.0f | %+7.1f%% | %5d | %7.0f%% |\n",
			"**"+t.Set+"**", fmt.Sprintf("total of %d", t.Workflows), "", t.BaseRAM, t.IntRAM, t.BaseBacking, t.IntBacking,
			-100*t.RAMReduction, -100*t.BackingReduction, t.BaseTime.Seconds(), t.IntTime.Seconds(), 100*t.TimeIncrease,
			t.Suspensions, 100*t.MinPagedOut)
	}
}

func reduction(base, in float64) float64 {
	if base <= 0 {
		return 0
	}
	return 1 - in/base
}

func dash(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
