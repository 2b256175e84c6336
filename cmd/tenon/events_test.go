package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventsDelays: "events delays LOG" prints one row per policy; with
// --workload it splits the gap between actions into model wait and resume,
// and a log of another workload is refused.
func TestEventsDelays(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	wl := filepath.Join(dir, "w.jsonl")
	other := filepath.Join(dir, "other.jsonl")
	events := `{"t_s":0,"kind":"run_start","policy":"tenon","time_scale":1}
{"t_s":0,"kind":"submit","policy":"tenon","workflow":"w"}
{"t_s":1,"kind":"agent_start","policy":"tenon","workflow":"w","attempt":1}
{"t_s":2,"kind":"sandbox_create","policy":"tenon","workflow":"w","attempt":1}
{"t_s":2,"kind":"admit","policy":"tenon","workflow":"w","attempt":1,"action":0,"queued_s":0,"charge_bytes":0}
{"t_s":2,"kind":"action_start","policy":"tenon","workflow":"w","attempt":1,"action":0}
{"t_s":3,"kind":"action_done","policy":"tenon","workflow":"w","attempt":1,"action":0}
{"t_s":9,"kind":"admit","policy":"tenon","workflow":"w","attempt":1,"action":1,"queued_s":2,"charge_bytes":0,"heavy":true}
{"t_s":9,"kind":"action_start","policy":"tenon","workflow":"w","attempt":1,"action":1}
{"t_s":10,"kind":"action_done","policy":"tenon","workflow":"w","attempt":1,"action":1}
{"t_s":10,"kind":"workflow_done","policy":"tenon","workflow":"w","attempt":1}
`
	wf := `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"a","mem":{"peak_mib":1}},{"wait_s":3,"class":"b","mem":{"peak_mib":1}}]}
`
	for p, s := range map[string]string{log: events, wl: wf, other: strings.ReplaceAll(wf, `"id":"w"`, `"id":"x"`)} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := newTestEnv()
	if err := runEventsDelays(context.Background(), &env.cliEnv, []string{"--workload", wl, log}); err != nil {
		t.Fatalf("%v (stderr %q)", err, env.errOut.String())
	}
	// Latency 10 = start 1 + create 1 + action 1 + between 4 (model wait 3, resume 1) + heavy wait 2 + action 1.
	fields := strings.Fields(strings.Split(strings.TrimSpace(env.out.String()), "\n")[1])
	want := []string{"tenon", "1/1", "10", "1", "1", "0", "2", "(1)", "2", "4", "3", "1", "0", "0"}
	if strings.Join(fields, " ") != strings.Join(want, " ") {
		t.Errorf("row %q, want %q\n%s", fields, want, env.out.String())
	}
	env = newTestEnv()
	if err := runEventsDelays(context.Background(), &env.cliEnv, []string{"--workload", other, log}); err == nil || !strings.Contains(err.Error(), `workflow "w" is not in the workload`) {
		t.Errorf("another workload: %v", err)
	}
	env = newTestEnv()
	if err := runEventsDelays(context.Background(), &env.cliEnv, nil); err != errUsage {
		t.Errorf("no log: %v, want a usage error", err)
	}
}
