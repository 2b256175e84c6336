package managed

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// notes counts Up and Down notifications per sandbox.
type notes struct {
	mu   sync.Mutex
	up   map[string]int
	down map[string]int
	seq  int
}

func newNotes() *notes { return &notes{up: map[string]int{}, down: map[string]int{}} }

func (n *notes) host(b sandbox.Backend, prefix string) controller.SandboxHost {
	return controller.SandboxHost{
		Backend: b,
		Spec: func(a *controller.Agent) sandbox.Spec {
			n.mu.Lock()
			n.seq++
			s := n.seq
			n.mu.Unlock()
			return sandbox.Spec{ID: fmt.Sprintf("%s-%s-a%d-s%d", prefix, a.ID, a.Attempt, s), Workspace: a.Workspace}
		},
		Up: func(a *controller.Agent, info sandbox.Info) {
			n.mu.Lock()
			n.up[info.ID]++
			n.mu.Unlock()
		},
		Down: func(a *controller.Agent, id string) {
			n.mu.Lock()
			n.down[id]++
			n.mu.Unlock()
		},
	}
}

// live returns the sandboxes announced and not yet gone; it fails on a
// sandbox announced or gone twice.
func (n *notes) live(tb testing.TB) []string {
	tb.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for id, u := range n.up {
		d := n.down[id]
		if u > 1 || d > 1 {
			tb.Errorf("sandbox %s: %d Up, %d Down notifications", id, u, d)
		}
		if u > d {
			out = append(out, id)
		}
	}
	for id := range n.down {
		if n.up[id] == 0 {
			tb.Errorf("sandbox %s: Down without Up", id)
		}
	}
	return out
}

// pressureVar is a settable pressure.
type pressureVar struct{ p atomic.Int32 }

func (p *pressureVar) get() residency.Pressure  { return residency.Pressure(p.p.Load()) }
func (p *pressureVar) set(v residency.Pressure) { p.p.Store(int32(v)) }

func agent(id string, n int) *controller.Agent {
	wf := &trajectory.Workflow{ID: id}
	for range n {
		wf.Actions = append(wf.Actions, trajectory.Action{Wait: 1, Class: "bash", Run: "true"})
	}
	return &controller.Agent{ID: id, Workflow: wf, Attempt: 1}
}

func lctx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

func alive(b sandbox.Backend, id string) bool {
	_, err := b.Info(context.Background(), id)
	return err == nil
}
