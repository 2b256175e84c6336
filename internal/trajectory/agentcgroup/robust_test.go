package agentcgroup

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun writes the files of run dir/<task>/attempt_1.
func writeRun(t *testing.T, dir, task string, files map[string]string) {
	t.Helper()
	run := filepath.Join(dir, task, "attempt_1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(run, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Samples one second apart from epoch 1700000000 (2023-11-14T22:13:20Z):
// 100, 100, 150, 300, 120, 120 MB.
const goodSamples = `{"samples":[
	{"epoch":1700000000,"mem_usage":"100MB / 8GB"},{"epoch":1700000001,"mem_usage":"100MB / 8GB"},
	{"epoch":1700000002,"mem_usage":"150MB / 8GB"},{"epoch":1700000003,"mem_usage":"300MB / 8GB"},
	{"epoch":1700000004,"mem_usage":"120MB / 8GB"},{"epoch":1700000005,"mem_usage":"120MB / 8GB"}]}`

// TestImportDamagedRuns: a truncated, an empty and a malformed run next to
// a good one; none aborts the import. The truncated run and the one in the
// older layout are imported with their warnings counted, the empty and
// malformed ones skipped with the reason.
func TestImportDamagedRuns(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "a-good", map[string]string{
		"resources.json": goodSamples,
		"results.json":   `{"image":"example/good:1"}`,
		"tool_calls.json": `[{"timestamp":"2023-11-14T22:13:20.500Z","end_timestamp":"2023-11-14T22:13:20.600Z","tool":"Read","input":{"file_path":"/a"}},
			{"timestamp":"2023-11-14T22:13:21.500Z","end_timestamp":"2023-11-14T22:13:23.500Z","tool":"Bash","input":{"command":"pytest"}}]`,
	})
	// Cut off inside the third call; results.json is not JSON.
	writeRun(t, dir, "b-truncated", map[string]string{
		"resources.json": goodSamples,
		"results.json":   `{"image": "exa`,
		"tool_calls.json": `[{"timestamp":"2023-11-14T22:13:20.500Z","end_timestamp":"2023-11-14T22:13:20.600Z","tool":"Read","input":{"file_path":"/a"}},
			{"timestamp":"2023-11-14T22:13:21.500Z","end_timestamp":"2023-11-14T22:13:23.500Z","tool":"Bash","input":{"command":"pytest"}},
			{"timestamp":"2023-11-14T22:13:24.`,
	})
	writeRun(t, dir, "c-empty", map[string]string{"resources.json": ``, "tool_calls.json": ``})
	writeRun(t, dir, "d-malformed", map[string]string{"resources.json": goodSamples, "tool_calls.json": `{"calls": oops}`})
	writeRun(t, dir, "e-no-samples", map[string]string{"resources.json": `{"samples":[]}`, "tool_calls.json": `[]`})
	// The older layout: start times only, no input; an unknown tool, a
	// call without a timestamp, a sample with a bad unit, and a call after
	// the samples end.
	writeRun(t, dir, "f-older-layout", map[string]string{
		"resources.json": strings.Replace(goodSamples, `"epoch":1700000005,"mem_usage":"120MB / 8GB"`, `"epoch":1700000005,"mem_usage":"120QB / 8GB"`, 1),
		"tool_calls.json": `[{"timestamp":"2023-11-14T22:13:21.500Z","tool":"Bash","id":"x1"},
			{"timestamp":"2023-11-14T22:13:23.800Z","tool":"Frobnicate","id":"x2"},
			{"tool":"Read","id":"x3"},
			{"timestamp":"2023-11-14T22:13:40Z","tool":"Read","id":"x4"}]`,
	})
	wfs, rep, err := Import(dir)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if rep.Runs != 6 || rep.Imported != 3 || len(wfs) != 3 {
		t.Fatalf("runs %d imported %d (%d workflows), want 6 and 3; report %+v", rep.Runs, rep.Imported, len(wfs), rep)
	}
	wantSkipped := map[string]string{
		"c-empty":      "tool_calls.json: empty file",
		"d-malformed":  `tool_calls.json: want "["`,
		"e-no-samples": "no tool calls",
	}
	for _, s := range rep.SkippedRuns {
		if want, ok := wantSkipped[s.Run]; !ok || !strings.Contains(s.Reason, want) {
			t.Errorf("skipped %s: %q; want %q", s.Run, s.Reason, want)
		}
		delete(wantSkipped, s.Run)
	}
	if len(wantSkipped) != 0 {
		t.Errorf("not skipped: %v", wantSkipped)
	}
	wantWarn := Warnings{
		WarnTruncated: 1, WarnNoResultsJSON: 1, // b
		WarnInferredEnd: 2, WarnNoCommand: 2, WarnUnknownTool: 1, WarnBadCall: 1, WarnBadSample: 1, WarnAfterSamples: 1, // f
	}
	if !maps.Equal(rep.Warnings, wantWarn) {
		t.Errorf("warnings %v\nwant %v", rep.Warnings, wantWarn)
	}
	if n := len(wfs[1].Actions); wfs[1].ID != "b-truncated" || n != 2 || wfs[1].Image != "" {
		t.Errorf("truncated run: %s with %d actions, image %q; want the 2 complete calls, no image", wfs[1].ID, n, wfs[1].Image)
	}
	old := wfs[2]
	if len(old.Actions) != 2 || old.Actions[0].Command != "bash" || old.Actions[1].Class != "frobnicate" {
		t.Fatalf("older layout: %+v", old.Actions)
	}
	// Bash starts at +1.5 s; the next call at +3.8 s. Samples after its
	// start: 150 at +2, 300 at +3: it peaks at +3 and ends there. After is
	// the last sample before +3.8 (300). Frobnicate: no later sample
	// before the end of the samples rises, so it ends at its start.
	a, b := old.Actions[0], old.Actions[1]
	if a.Recorded.DurationS != 1.5 || a.Recorded.PeakMiB < 190 || b.Wait != 0.8 || b.Recorded.DurationS != 0 {
		t.Errorf("inferred: bash dur %g peak %g; frobnicate wait %g dur %g; want 1.5, ~191, 0.8, 0",
			a.Recorded.DurationS, a.Recorded.PeakMiB, b.Wait, b.Recorded.DurationS)
	}
	var sb strings.Builder
	if err := rep.Print(&sb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"skipped c-empty: tool_calls.json: empty file", WarnInferredEnd + " 2"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sb.String())
		}
	}
}

// TestInferEnd steps through the rule on literal samples.
func TestInferEnd(t *testing.T) {
	s := func(mib ...float64) []Sample {
		out := make([]Sample, len(mib))
		for i, m := range mib {
			out[i] = Sample{Epoch: float64(i), Bytes: int64(m * (1 << 20))}
		}
		return out
	}
	tests := []struct {
		name         string
		samples      []Sample
		lo           int
		start, until float64
		want         float64
	}{
		{"ends at its peak", s(100, 120, 300, 200, 500), 0, 0.5, 3.5, 2},
		{"first of equal peaks", s(100, 300, 300), 0, 0.5, 9, 1},
		{"rise within noise: ends at start", s(100, 100.5, 100.9), 0, 0.5, 9, 0.5},
		{"a fall: ends at start", s(100, 90, 80), 0, 0.5, 9, 0.5},
		{"no sample before the next call", s(100, 300), 0, 0.2, 0.9, 0.2},
		{"samples past until ignored", s(100, 100, 300), 1, 1.2, 1.9, 1.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inferEnd(tt.samples, tt.lo, tt.start, tt.until); got != tt.want {
				t.Errorf("inferEnd = %g, want %g", got, tt.want)
			}
		})
	}
}

// TestImportBatch18 imports the older-layout real traces (start times
// only) when the checkout sits next to ../shared/traces.
func TestImportBatch18(t *testing.T) {
	wfs, rep := importShared(t, "agentcgroup-batch18")
	if rep.Runs != 23 || len(wfs) < 20 {
		t.Errorf("imported %d workflows of %d runs, want at least 20 of 23", len(wfs), rep.Runs)
	}
	if rep.Warnings[WarnInferredEnd] < rep.Actions*9/10 || rep.Actions < 1000 {
		t.Errorf("%d inferred ends of %d actions; want nearly every end inferred (the layout has none)", rep.Warnings[WarnInferredEnd], rep.Actions)
	}
}
