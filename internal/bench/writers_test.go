package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/report"
)

func testMeta() Meta {
	return Meta{Name: "bench-test", Command: "tenon bench --quick", Commit: "abc123", Dirty: true,
		Machine: "2 cores", Backend: "fake", Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Wall: time.Minute}
}

func TestWriteMarkdown(t *testing.T) {
	tests := []struct {
		name     string
		res      *Results
		contains []string
		absent   []string
	}{
		{"complete", fakeResults(metrics("tenon", 14, 20, 20, 0)), []string{
			"# tenon bench: bench-test", "tenon bench --quick", "`abc123` (working tree dirty)", "status: complete",
			"| tenon OOM events | 0 | 0 | met |", "### main/swe/1GiB (headline)", "### static/swe/1GiB/N=2",
			"| eager | dnf | 0.0/h | - | eager did not finish 8 of 20 | 60.0 s | dnf |", "| agent-reservation | 200.0 s | 0.0/h | - | 14.29x |",
			"| tenon | 14.0 s | 0.0/h | 1.40x | - |", "60% (12/20)", "![a.png](a.png)",
			"| speedup over Eager | >= 5.5x | eager did not finish 8 of 20 | did not finish |",
		}, []string{"PARTIAL", "8.57x"}},
		{"partial with a failed case", func() *Results {
			r := fakeResults(metrics("tenon", 50, 19, 20, 3))
			r.Cases, r.Interrupted = 9, true
			one := r.Outcomes[0].Comparison
			r.Outcomes = append(r.Outcomes, Outcome{Case: Case{Name: "ablation/swe/1GiB", Reps: 3}, Comparison: one, Reps: []*report.Comparison{one}, Err: errFake,
				Host: "4 cores, 8.00 GiB RAM, Linux 6.1.0, cgroup memory v2"})
			return r
		}(), []string{"**PARTIAL**: 4 of 9 cases ran", "**error**: fake failure", "| tenon OOM events | 0 | 3 | not met |", ", 1 of 3 repetitions, took",
			", on another machine: 4 cores, 8.00 GiB RAM, Linux 6.1.0, cgroup memory v2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteMarkdown(&b, testMeta(), tt.res, []string{"a.png"}); err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(b.String(), s) {
					t.Errorf("markdown lacks %q:\n%s", s, b.String())
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(b.String(), s) {
					t.Errorf("markdown has %q", s)
				}
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	r := fakeResults(metrics("tenon", 14, 20, 20, 0))
	r.Cases, r.Interrupted = 4, true
	var b bytes.Buffer
	if err := WriteJSON(&b, testMeta(), r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Oversubscription float64 `json:"oversubscription"`
		Results          []struct {
			Policy    string  `json:"policy"`
			MakespanS float64 `json:"makespan_s"`
		} `json:"results"`
		Partial bool `json:"partial"`
		Goals   []Goal
		Cases   []struct {
			Name       string `json:"name"`
			Group      string `json:"group"`
			Headline   bool   `json:"headline"`
			Comparison *struct {
				Results []json.RawMessage `json:"results"`
			} `json:"comparison"`
		} `json:"cases"`
		Meta Meta `json:"meta"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("decoding: %v\n%s", err, b.String())
	}
	if doc.Oversubscription != 9.2 || len(doc.Results) != 3 || doc.Results[2].Policy != "tenon" || doc.Results[2].MakespanS != 14 {
		t.Errorf("top level is not the headline comparison: %+v", doc)
	}
	if !doc.Partial || len(doc.Goals) != 7 || len(doc.Cases) != 3 || doc.Meta.Commit != "abc123" {
		t.Errorf("partial %v, %d goals, %d cases, meta %+v", doc.Partial, len(doc.Goals), len(doc.Cases), doc.Meta)
	}
	if !doc.Cases[2].Headline || doc.Cases[2].Comparison == nil || len(doc.Cases[2].Comparison.Results) != 3 {
		t.Errorf("headline case %+v", doc.Cases[2])
	}
}

func TestPlots(t *testing.T) {
	m := DefaultMatrix()
	m.Workloads, m.N, m.Budgets, m.LoadNs = []string{WorkloadSWE, WorkloadRL}, 4, m.Budgets[:2], []int{2, 3}
	cs := mustCases(t, m)
	table := fakeRun{}
	for i, c := range cs {
		ms := map[string]report.Metrics{}
		for j, p := range c.Policies {
			ms[p] = metrics(p, float64(10+i+j), 4, 4, j)
		}
		for _, p := range []string{"static-2", "static-3", "static-4", "static-6"} {
			ms[p] = metrics(p, float64(30+i), 4, 4, 0)
		}
		table[c.Name] = ms
	}
	res := Run(t.Context(), cs, Config{Run: table.run, FallbackStatic: "static-4"})
	for suffix, fn := range Plots {
		t.Run(suffix, func(t *testing.T) {
			var b bytes.Buffer
			ok, err := fn(&b, res)
			if err != nil || !ok {
				t.Fatalf("ok %v err %v", ok, err)
			}
			if !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")) {
				t.Errorf("not a PNG (%d bytes)", b.Len())
			}
			if ok, err := fn(&bytes.Buffer{}, &Results{}); ok || err != nil {
				t.Errorf("empty results: ok %v err %v, want nothing drawn", ok, err)
			}
		})
	}
}

// TestReadJSON: what WriteJSON writes reads back into the same cases,
// comparisons, errors, wall times and best static, so the goals come out the
// same; a file that is not bench results is refused.
func TestReadJSON(t *testing.T) {
	r := fakeResults(metrics("tenon", 14, 20, 20, 0))
	r.Cases, r.Interrupted = 5, true
	r.BestStatic, r.BestStaticWhy = "static-2", "fastest at 100 %"
	r.Outcomes[0].Wall = 1500 * time.Millisecond
	r.Outcomes = append(r.Outcomes, Outcome{Case: Case{Name: "ablation/swe/1GiB", Group: GroupAblation, X: 2}, Err: errFake})
	head := &r.Outcomes[2] // two repetitions, the second slower
	slow := &report.Comparison{LowerBoundS: 10, Results: []report.Metrics{metrics("eager", 150, 12, 20, 90), metrics("tenon", 18, 20, 20, 0)}}
	head.Reps = []*report.Comparison{head.Comparison, slow}
	head.Comparison = report.Aggregate(head.Reps)
	head.Case.Reps = 3 // three asked, the third failed
	head.Host = "2 cores, 4.00 GiB RAM, Linux 6.18.0, cgroup memory v1"
	var b bytes.Buffer
	if err := WriteJSON(&b, testMeta(), r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"reps": [`) || !strings.Contains(b.String(), `"spread": {`) {
		t.Errorf("JSON lacks the repetitions or the spread:\n%s", b.String())
	}
	got, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Outcomes) != len(r.Outcomes) || got.Cases != len(r.Outcomes) || !got.Interrupted ||
		got.BestStatic != r.BestStatic || got.BestStaticWhy != r.BestStaticWhy {
		t.Fatalf("read %d outcomes of %d cases, interrupted %v, best %q (%q)", len(got.Outcomes), got.Cases, got.Interrupted, got.BestStatic, got.BestStaticWhy)
	}
	for i, o := range got.Outcomes {
		w := r.Outcomes[i]
		if o.Case.Name != w.Case.Name || o.Case.Group != w.Case.Group || o.Case.Headline != w.Case.Headline || o.Case.X != w.Case.X ||
			o.Case.Reps != w.Case.Reps || o.Host != w.Host || o.Wall != w.Wall || (o.Err == nil) != (w.Err == nil) {
			t.Errorf("outcome %d: %+v, want %+v", i, o, w)
		}
		if w.Err != nil && o.Err.Error() != w.Err.Error() {
			t.Errorf("outcome %d: error %q, want %q", i, o.Err, w.Err)
		}
		if (o.Comparison == nil) != (w.Comparison == nil) || o.Comparison != nil && len(o.Comparison.Results) != len(w.Comparison.Results) {
			t.Errorf("outcome %d: comparison %+v, want %+v", i, o.Comparison, w.Comparison)
		}
	}
	if reps := got.Outcomes[2].Reps; len(reps) != 2 || reps[1].Results[1].MakespanS != 18 {
		t.Errorf("headline reps read back as %+v, want 2 with tenon at 18 s in the second", reps)
	}
	if reps := got.Outcomes[0].Reps; len(reps) != 1 || reps[0] != got.Outcomes[0].Comparison {
		t.Errorf("a case of one repetition reads back as %d reps, want its comparison", len(reps))
	}
	if m, _ := got.Headline().Comparison.Policy("tenon"); m.Reps != 2 || m.Spread == nil || m.Spread.MakespanS != [2]report.Seconds{14, 18} {
		t.Errorf("headline tenon read back as %+v, want 2 reps, makespan 14–18 s", m)
	}
	wantGoals, gotGoals := goalByName(Goals(r)), goalByName(Goals(got))
	for name, g := range wantGoals {
		if gotGoals[name].Measured != g.Measured || gotGoals[name].Met != g.Met {
			t.Errorf("goal %s: %+v after reading, want %+v", name, gotGoals[name], g)
		}
	}
	for _, bad := range []string{"not json", `{"meta": {}}`} {
		if _, err := ReadJSON(strings.NewReader(bad)); !errors.Is(err, ErrBadResults) {
			t.Errorf("ReadJSON(%q) = %v, want ErrBadResults", bad, err)
		}
	}
}
