package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// delaysLog is a two-policy event log with known phases, at time scale
// 0.5. Policy p: workflow a arrives at 0, starts at 1, its sandbox is up at
// 3; action 0 queues 0.5 s (light) and runs 1 s (4-5); action 1 is
// enqueued 2 s after that (model wait 2 × 0.5 = 1 s, so 1 s of resume),
// queues 1 s (heavy) and runs 2 s (8-10); done at 11. Workflow b arrives at
// 0, starts at 2, is OOM-killed in its first attempt (2-6), retried at 7,
// up at 8, its one action admitted at once, 9-12; done at 13. Workflow c
// never ends. Policy q has one workflow.
func delaysLog(t *testing.T) []byte {
	t.Helper()
	act := controller.IntPtr
	es := []controller.Event{
		{T: 0, Kind: controller.EventRunStart, Policy: "p", TimeScale: 0.5},
		{T: 0, Kind: controller.EventSubmit, Policy: "p", Workflow: "a"},
		{T: 0, Kind: controller.EventSubmit, Policy: "p", Workflow: "b"},
		{T: 0, Kind: controller.EventSubmit, Policy: "p", Workflow: "c"},
		{T: 1, Kind: controller.EventAgentStart, Policy: "p", Workflow: "a", Attempt: 1},
		{T: 2, Kind: controller.EventAgentStart, Policy: "p", Workflow: "b", Attempt: 1},
		{T: 2.5, Kind: controller.EventAgentStart, Policy: "p", Workflow: "c", Attempt: 1},
		{T: 3, Kind: controller.EventSandboxCreate, Policy: "p", Workflow: "a", Attempt: 1},
		{T: 3, Kind: controller.EventSandboxCreate, Policy: "p", Workflow: "b", Attempt: 1},
		{T: 4, Kind: controller.EventAdmit, Policy: "p", Workflow: "a", Attempt: 1, Action: act(0), QueuedS: 0.5},
		{T: 4, Kind: controller.EventActionStart, Policy: "p", Workflow: "a", Attempt: 1, Action: act(0)},
		{T: 4, Kind: controller.EventAdmit, Policy: "p", Workflow: "b", Attempt: 1, Action: act(0)},
		{T: 4, Kind: controller.EventActionStart, Policy: "p", Workflow: "b", Attempt: 1, Action: act(0)},
		{T: 5, Kind: controller.EventActionDone, Policy: "p", Workflow: "a", Attempt: 1, Action: act(0)},
		{T: 6, Kind: controller.EventOOM, Policy: "p", Workflow: "b", Attempt: 1, Action: act(0)},
		{T: 6, Kind: controller.EventActionDone, Policy: "p", Workflow: "b", Attempt: 1, Action: act(0)},
		{T: 7, Kind: controller.EventRetry, Policy: "p", Workflow: "b"},
		{T: 7, Kind: controller.EventAgentStart, Policy: "p", Workflow: "b", Attempt: 2},
		{T: 8, Kind: controller.EventAdmit, Policy: "p", Workflow: "a", Attempt: 1, Action: act(1), QueuedS: 1, Heavy: true},
		{T: 8, Kind: controller.EventActionStart, Policy: "p", Workflow: "a", Attempt: 1, Action: act(1)},
		{T: 8, Kind: controller.EventSandboxCreate, Policy: "p", Workflow: "b", Attempt: 2},
		{T: 9, Kind: controller.EventAdmit, Policy: "p", Workflow: "b", Attempt: 2, Action: act(0)},
		{T: 9, Kind: controller.EventActionStart, Policy: "p", Workflow: "b", Attempt: 2, Action: act(0)},
		{T: 10, Kind: controller.EventActionDone, Policy: "p", Workflow: "a", Attempt: 1, Action: act(1)},
		{T: 11, Kind: controller.EventWorkflowDone, Policy: "p", Workflow: "a", Attempt: 1},
		{T: 12, Kind: controller.EventActionDone, Policy: "p", Workflow: "b", Attempt: 2, Action: act(0)},
		{T: 13, Kind: controller.EventWorkflowDone, Policy: "p", Workflow: "b", Attempt: 2},
		{T: 0, Kind: controller.EventSubmit, Policy: "q", Workflow: "a"},
		{T: 0, Kind: controller.EventAgentStart, Policy: "q", Workflow: "a", Attempt: 1},
		{T: 1, Kind: controller.EventWorkflowDone, Policy: "q", Workflow: "a", Attempt: 1},
	}
	var b bytes.Buffer
	for _, e := range es {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

func delaysWorkload() []trajectory.Workflow {
	return []trajectory.Workflow{
		{ID: "a", Actions: []trajectory.Action{{Wait: 3}, {Wait: 2}}},
		{ID: "b", Actions: []trajectory.Action{{Wait: 1}}},
		{ID: "c", Actions: []trajectory.Action{{Wait: 1}}},
	}
}

func TestReadDelays(t *testing.T) {
	ds, err := ReadDelays(bytes.NewReader(delaysLog(t)), delaysWorkload())
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Policy != "p" || ds[1].Policy != "q" {
		t.Fatalf("policies %+v, want p then q", ds)
	}
	want := Delays{Policy: "p", Workflows: 3, Completed: 2, Attempts: 3,
		Latency: 11 + 13, Start: 1 + 2, Create: 2 + 1, AdmitLight: 0.5, AdmitHeavy: 1, Heavy: 1, Admits: 3,
		Actions: 1 + 2 + 3, Between: 2, ModelWait: 1, Resume: 1, Lost: 6 - 2}
	if got := ds[0]; got != want {
		t.Errorf("p:\n got %+v\nwant %+v", got, want)
	}
	// a: 11 = start 1 + create 2 + light 0.5 + actions 3 + between 2 + heavy 1 + 1.5 unmarked;
	// b: 13 = start 2 + lost 4 + (retry wait 1) + create 1 + action 3 + 2 unmarked.
	if o := ds[0].Other(); math.Abs(o-(1.5+1+2)) > 1e-9 {
		t.Errorf("other %g, want 4.5", o)
	}
	if q := ds[1]; q.Workflows != 1 || q.Completed != 1 || q.Latency != 1 || q.ModelWait != 0 {
		t.Errorf("q: %+v", q)
	}

	// Without the workload, between is not split.
	ds, err = ReadDelays(bytes.NewReader(delaysLog(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[0]; d.Between != 2 || d.ModelWait != 0 || d.Resume != 0 {
		t.Errorf("without a workload: between %g, model wait %g, resume %g; want 2, 0, 0", d.Between, d.ModelWait, d.Resume)
	}
	var out bytes.Buffer
	if err := WriteDelays(&out, ds); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "admit heavy (n)") || !strings.Contains(out.String(), "2/3") {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestReadDelaysErrors(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		wfs       []trajectory.Workflow
		want      string
	}{
		{"not JSON", "{\"t_s\":0,\"kind\":\"submit\"}\nnot json\n", nil, "line 2"},
		{"no policy", "{\"t_s\":0,\"kind\":\"sample\"}\n", nil, "no policy events"},
		{"empty", "", nil, "no policy events"},
		{"workflow not in the workload", "{\"t_s\":0,\"kind\":\"submit\",\"policy\":\"p\",\"workflow\":\"z\"}\n",
			delaysWorkload(), `workflow "z" is not in the workload`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadDelays(strings.NewReader(tc.log), tc.wfs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
