package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSimCommand(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"generated, live-trained predictors", []string{"--n", "8", "--budget", "1GiB", "--oversub", "3", "--policy", "eager,tenon", "--json"}, ""},
		{"sampled predictors and a parameter", []string{"--n", "8", "--budget", "1GiB", "--policy", "tenon", "--train", "sampled", "--param", "margin=200MiB", "--json"}, ""},
		{"OOM hold timeout", []string{"--n", "8", "--budget", "1GiB", "--oversub", "3", "--policy", "gate,eager", "--param", "hold=5s", "--json"}, ""},
		{"OOM hold off", []string{"--n", "8", "--budget", "1GiB", "--policy", "gate", "--param", "hold=off", "--json"}, ""},
		{"unknown training mode", []string{"--n", "8", "--policy", "tenon", "--train", "psychic"}, "--train"},
		{"unknown parameter", []string{"--n", "8", "--policy", "tenon", "--param", "speed=11"}, "unknown parameter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv()
			err := runSim(t.Context(), &env.cliEnv, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (stderr %s)", err, env.errOut.String())
			}
			var out struct {
				Results []struct {
					Policy    string `json:"policy"`
					Workflows int    `json:"workflows"`
				} `json:"results"`
				Holds []struct {
					Policy string `json:"policy"`
				} `json:"oom_hold"`
			}
			if err := json.Unmarshal(env.out.Bytes(), &out); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, env.out.String())
			}
			if len(out.Results) == 0 || out.Results[0].Workflows != 8 {
				t.Fatalf("results %+v, want 8 workflows per policy", out.Results)
			}
			if len(out.Holds) != len(out.Results) || out.Holds[0].Policy != out.Results[0].Policy {
				t.Fatalf("oom_hold %+v, want one entry per policy", out.Holds)
			}
		})
	}
}

// TestSimTrace: --trace writes the simulated lifecycle to stderr, each line
// prefixed with the policy, every action's start and end, and every
// sandbox's memory at each OOM kill.
func TestSimTrace(t *testing.T) {
	env := newTestEnv()
	err := runSim(t.Context(), &env.cliEnv, []string{"--workload", "../../workloads/default.jsonl", "--budget", "2GiB", "--policy", "eager", "--trace", "--json"})
	if err != nil {
		t.Fatalf("%v (stderr %s)", err, env.errOut.String())
	}
	trace := env.errOut.String()
	if !strings.Contains(trace, "eager ") || !strings.Contains(trace, " agent_start ") {
		t.Fatalf("stderr has no lifecycle trace:\n%.2000s", trace)
	}
	var out struct {
		Results []struct {
			OOM int `json:"oom_events"`
		} `json:"results"`
	}
	if err := json.Unmarshal(env.out.Bytes(), &out); err != nil || len(out.Results) != 1 {
		t.Fatalf("stdout is not the JSON result (%v):\n%s", err, env.out.String())
	}
	if kills := strings.Count(trace, " oom "); kills != out.Results[0].OOM || kills == 0 {
		t.Fatalf("trace shows %d OOM kills, result %d (want the same, at least one)", kills, out.Results[0].OOM)
	}
	if !strings.Contains(trace, " mem=") || !strings.Contains(trace, "floor=") {
		t.Errorf("no per-sandbox memory lines at the kills:\n%.2000s", trace)
	}
	// Every action that ended was started, and is traced both times.
	if starts, dones := strings.Count(trace, " action_start "), strings.Count(trace, " action_done "); dones == 0 || starts < dones {
		t.Errorf("trace has %d action starts and %d action ends (want at least one end, no end without its start)", starts, dones)
	}
}
