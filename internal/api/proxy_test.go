package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/controller"
)

func TestModelProxy(t *testing.T) {
	var mu sync.Mutex
	var seenPaths, seenStates []string
	var d *daemon
	var id string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a, err := d.client.GetAgent(r.Context(), id)
		mu.Lock()
		seenPaths = append(seenPaths, r.URL.Path)
		if err == nil {
			seenStates = append(seenStates, a.State)
		}
		mu.Unlock()
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, tok := range []string{"Hel", "lo"} {
				io.WriteString(w, `data: {"choices":[{"delta":{"content":"`+tok+`"}}]}`+"\n\n")
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"hi"}}]}`)
	}))
	defer upstream.Close()
	d = startDaemon(t, daemonOpts{upstream: upstream.URL + "/v1"})
	ctx := context.Background()
	var err error
	id, err = d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}

	events := make(chan controller.Event, 64)
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	go d.client.Events(ectx, func(e controller.Event) error { events <- e; return nil })
	waitFor(t, func() bool { d.client.Wait(ctx, id, false); return len(events) > 0 }) // stream is up
	// Wait(false) calls made while probing may still be on their way through
	// the stream. A marked begin/end pair puts them behind us: the stream is
	// ordered, so once the marker's wait_end arrives nothing stale remains.
	nextWait := func(kind string) {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Workflow == id && e.Kind == kind {
					return
				}
			case <-timeout:
				t.Fatalf("no %s event within 5 s", kind)
			}
		}
	}
	if err := d.client.Wait(ctx, id, true); err != nil {
		t.Fatal(err)
	}
	nextWait("wait_begin")
	if err := d.client.Wait(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	nextWait("wait_end")

	tests := []struct {
		name, body, want string
	}{
		{name: "plain", body: `{"model":"m","messages":[]}`, want: `"content":"hi"`},
		{name: "streaming", body: `{"model":"m","stream":true,"messages":[]}`, want: "[DONE]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := d.client.ChatCompletions(ctx, id, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			var sb strings.Builder
			sc := bufio.NewScanner(rc)
			for sc.Scan() {
				sb.WriteString(sc.Text() + "\n")
			}
			if !strings.Contains(sb.String(), tt.want) {
				t.Errorf("answer %q lacks %q", sb.String(), tt.want)
			}
			var kinds []string
			for len(kinds) < 2 {
				e := <-events
				if e.Workflow == id && strings.HasPrefix(e.Kind, "wait_") {
					kinds = append(kinds, e.Kind)
				}
			}
			if kinds[0] != "wait_begin" || kinds[1] != "wait_end" {
				t.Errorf("events %v, want wait_begin then wait_end", kinds)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for i, p := range seenPaths {
		if p != "/v1/chat/completions" {
			t.Errorf("upstream saw path %q", p)
		}
		if seenStates[i] != api.StateModel {
			t.Errorf("agent state during the call = %q, want %q", seenStates[i], api.StateModel)
		}
	}
	if a, _ := d.client.GetAgent(ctx, id); a.State == api.StateModel {
		t.Errorf("agent still in a model wait after the calls")
	}
}

func TestEventsAndMetrics(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	ctx := context.Background()
	id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan controller.Event, 64)
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	go d.client.Events(ectx, func(e controller.Event) error { got <- e; return nil })
	waitFor(t, func() bool { d.client.Wait(ctx, id, true); return len(got) > 0 })
	for _, cmd := range []string{"true", "oom"} {
		if _, err := d.client.Exec(ctx, id, api.ExecRequest{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for seen[controller.EventOOM] == 0 {
		e := <-got
		seen[e.Kind]++
	}
	for _, k := range []string{controller.EventSandboxCreate, controller.EventAdmit, controller.EventActionStart, controller.EventActionDone} {
		if seen[k] == 0 {
			t.Errorf("no %s event; saw %v", k, seen)
		}
	}
	m, err := d.client.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tenon_action_duration_seconds_count 2", "tenon_oom_events_total 1", "tenon_teardowns_total 1",
		"tenon_pressure 0", "tenon_budget_bytes 1.073741824e+09", "tenon_queued_actions 0",
		"tenon_gate_denials_total 0", "tenon_rematerializations_total 0", "tenon_admitted_charge_bytes 0",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// After the OOM the sandbox was released; the next action rematerializes it.
	if _, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	m, _ = d.client.Metrics(ctx)
	if !strings.Contains(m, "tenon_rematerializations_total 1") {
		t.Errorf("rematerialization not counted")
	}
	_ = json.Marshal
}
