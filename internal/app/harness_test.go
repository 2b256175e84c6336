package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// traceFixtures is the agentcgroup package's synthetic trace directory.
var traceFixtures = filepath.Join("..", "trajectory", "agentcgroup", "testdata", "runs")

// TestHarnessSets: the swe set is generated, the traces set holds at most
// TracesN imported workflows, in id order, each with at least 4 actions.
func TestHarnessSets(t *testing.T) {
	tests := []struct {
		name      string
		cfg       HarnessConfig
		wantSets  []string
		wantSWE   int
		maxTraces int
	}{
		{name: "swe only", cfg: HarnessConfig{SWE: 2, Seed: 1}, wantSets: []string{"swe"}, wantSWE: 2},
		{name: "traces only", cfg: HarnessConfig{Traces: traceFixtures, TracesN: 1}, wantSets: []string{"traces"}, maxTraces: 1},
		{name: "both", cfg: HarnessConfig{SWE: 1, Seed: 1, Traces: traceFixtures, TracesN: 5}, wantSets: []string{"swe", "traces"}, wantSWE: 1, maxTraces: 5},
		{name: "traces-n 0 imports nothing", cfg: HarnessConfig{SWE: 1, Traces: traceFixtures}, wantSets: []string{"swe"}, wantSWE: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sets, err := harnessSets(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range sets {
				names = append(names, s.name)
				switch s.name {
				case "swe":
					if len(s.wfs) != tt.wantSWE {
						t.Errorf("%d swe workflows, want %d", len(s.wfs), tt.wantSWE)
					}
				case "traces":
					if len(s.wfs) == 0 || len(s.wfs) > tt.maxTraces {
						t.Errorf("%d imported workflows, want 1 to %d", len(s.wfs), tt.maxTraces)
					}
					for i, wf := range s.wfs {
						if len(wf.Actions) < 4 {
							t.Errorf("%s has %d actions, want at least 4", wf.ID, len(wf.Actions))
						}
						if i > 0 && s.wfs[i-1].ID >= wf.ID {
							t.Errorf("imported workflows out of id order: %s before %s", s.wfs[i-1].ID, wf.ID)
						}
					}
				}
			}
			if strings.Join(names, ",") != strings.Join(tt.wantSets, ",") {
				t.Errorf("sets %v, want %v", names, tt.wantSets)
			}
		})
	}
}

// TestHarnessSetsNothing: no workflow to replay, or a trace directory
// that cannot be imported, is an error.
func TestHarnessSetsNothing(t *testing.T) {
	for cfg, want := range map[*HarnessConfig]string{
		{Traces: traceFixtures}:                                  "nothing to replay",
		{Traces: filepath.Join(t.TempDir(), "none"), TracesN: 1}: "agentcgroup",
	} {
		if _, err := harnessSets(*cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("harnessSets(%+v): %v, want an error containing %q", *cfg, err, want)
		}
	}
}
