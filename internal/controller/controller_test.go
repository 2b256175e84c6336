package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestOutcomeFailure(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		o    controller.Outcome
		want error
	}{
		{name: "success", o: controller.Outcome{}},
		{name: "non-zero exit is not a failure", o: controller.Outcome{Exit: 2}},
		{name: "oom", o: controller.Outcome{Exit: -1, OOM: true}, want: controller.ErrOOM},
		{name: "timeout", o: controller.Outcome{Exit: -1, TimedOut: true}, want: controller.ErrTimeout},
		{name: "lost", o: controller.Outcome{Err: boom}, want: controller.ErrSandboxLost},
		{name: "oom wins over err", o: controller.Outcome{OOM: true, Err: boom}, want: controller.ErrOOM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.o.Failure()
			if tt.want == nil && got != nil || tt.want != nil && !errors.Is(got, tt.want) {
				t.Errorf("Failure() = %v, want %v", got, tt.want)
			}
			if tt.name == "lost" && !errors.Is(got, boom) {
				t.Errorf("Failure() = %v does not wrap the exec error", got)
			}
		})
	}
}

func TestAgentAction(t *testing.T) {
	wf := &trajectory.Workflow{Actions: []trajectory.Action{{Class: "a"}, {Class: "b"}}}
	tests := []struct {
		name string
		next int
		want string
	}{
		{name: "first", next: 0, want: "a"},
		{name: "last", next: 1, want: "b"},
		{name: "past the end", next: 2},
		{name: "negative", next: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &controller.Agent{Workflow: wf, Next: tt.next}
			got := a.Action()
			if (got == nil) != (tt.want == "") || got != nil && got.Class != tt.want {
				t.Errorf("Action() = %+v, want class %q", got, tt.want)
			}
		})
	}
}

func TestResident(t *testing.T) {
	ctx := context.Background()
	be := fake.New(fake.Options{CreateErr: func(s sandbox.Spec) error {
		if s.ID == "sb-bad" {
			return errors.New("no room")
		}
		return nil
	}})
	defer be.Close()
	var ups, downs []string
	n := 0
	names := []string{"sb-1", "sb-bad", "sb-2"}
	m := controller.NewResident(controller.SandboxHost{
		Backend: be,
		Spec: func(a *controller.Agent) sandbox.Spec {
			id := names[n]
			n++
			return sandbox.Spec{ID: id}
		},
		Up:   func(a *controller.Agent, info sandbox.Info) { ups = append(ups, info.ID) },
		Down: func(a *controller.Agent, id string) { downs = append(downs, id) },
	})
	a := &controller.Agent{ID: "w"}
	for i := range 3 {
		id, err := m.Ensure(ctx, a)
		if err != nil || id != "sb-1" || a.SandboxID != "sb-1" {
			t.Fatalf("Ensure #%d = %q, %v (agent has %q), want sb-1", i, id, err, a.SandboxID)
		}
		if err := m.Boundary(ctx, a, controller.Outcome{}); err != nil || a.SandboxID != "sb-1" {
			t.Fatalf("Boundary tore the sandbox down or failed: %v", err)
		}
	}
	if err := m.Release(ctx, a); err != nil || a.SandboxID != "" {
		t.Fatalf("Release = %v, agent has %q", err, a.SandboxID)
	}
	if err := m.Release(ctx, a); err != nil {
		t.Errorf("second Release = %v, want nil", err)
	}
	if _, err := m.Ensure(ctx, a); err == nil || a.SandboxID != "" {
		t.Errorf("Ensure with a failing Create = %v, agent has %q", err, a.SandboxID)
	}
	if id, err := m.Ensure(ctx, a); err != nil || id != "sb-2" {
		t.Errorf("Ensure after a failure = %q, %v, want sb-2", id, err)
	}
	_ = m.Release(ctx, a)
	if fmt.Sprint(ups) != "[sb-1 sb-2]" || fmt.Sprint(downs) != "[sb-1 sb-2]" {
		t.Errorf("ups %v downs %v, want [sb-1 sb-2] both", ups, downs)
	}
	if live := be.Live(); len(live) != 0 {
		t.Errorf("left live: %v", live)
	}
}

func TestLiveSet(t *testing.T) {
	var s controller.LiveSet
	a := &controller.Agent{ID: "w"}
	s.Add(a, sandbox.Info{ID: "b"})
	s.Add(a, sandbox.Info{ID: "a"})
	s.Add(a, sandbox.Info{ID: "c"})
	s.Remove("c")
	s.Remove("nope")
	s.SetRunning("b", true)
	s.SetRunning("nope", true)
	l := s.List()
	if l[0].Running || !l[1].Running {
		t.Errorf("Running flags = %v %v, want false true", l[0].Running, l[1].Running)
	}
	if len(l) != 2 || l[0].Info.ID != "a" || l[1].Info.ID != "b" || l[0].Agent != a || s.Len() != 2 {
		t.Errorf("List = %+v", l)
	}
}

func TestEventJSON(t *testing.T) {
	tests := []struct {
		name     string
		e        controller.Event
		wantKeys []string
		noKeys   []string
	}{
		{name: "action_done keeps zero measurements", e: controller.Event{Kind: controller.EventActionDone, Action: controller.IntPtr(0), Exit: controller.IntPtr(0)},
			wantKeys: []string{"t_s", "kind", "action", "exit", "avg_bytes", "peak_bytes", "duration_s", "oom", "timed_out", "mem_bytes"}, noKeys: []string{"queued_s", "running"}},
		{name: "admit keeps zero queue time", e: controller.Event{Kind: controller.EventAdmit}, wantKeys: []string{"queued_s", "charge_bytes"}, noKeys: []string{"avg_bytes"}},
		{name: "sample keeps zero gauges", e: controller.Event{Kind: controller.EventSample, Running: 3}, wantKeys: []string{"mem_bytes", "running", "agents", "live"}},
		{name: "others omit zeros", e: controller.Event{Kind: controller.EventSubmit, Workflow: "w"}, wantKeys: []string{"t_s", "kind", "workflow"}, noKeys: []string{"mem_bytes", "action", "queued_s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			for _, k := range tt.wantKeys {
				if _, ok := m[k]; !ok {
					t.Errorf("%s lacks %q", b, k)
				}
			}
			for _, k := range tt.noKeys {
				if _, ok := m[k]; ok {
					t.Errorf("%s has %q", b, k)
				}
			}
			var back controller.Event
			if err := json.Unmarshal(b, &back); err != nil || back.Kind != tt.e.Kind || back.Running != tt.e.Running {
				t.Errorf("round trip = %+v, %v", back, err)
			}
		})
	}
}
