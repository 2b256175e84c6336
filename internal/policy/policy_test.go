package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantName string
		wantErr  error
	}{
		{name: "eager", in: "eager", wantName: "eager"},
		{name: "case and space", in: " Eager ", wantName: "eager"},
		{name: "static", in: "static-4", wantName: "static-4"},
		{name: "static upper", in: "Static-12", wantName: "static-12"},
		{name: "static zero", in: "static-0", wantErr: ErrBadOption},
		{name: "static word", in: "static-x", wantErr: ErrBadOption},
		{name: "static literal N", in: "static-N", wantErr: ErrBadOption},
		{name: "static bare", in: "static", wantErr: ErrUnknown},
		{name: "unknown", in: "greedy", wantErr: ErrUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Lookup(tt.in, Options{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Lookup(%q) err = %v, want %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if p.Name() != tt.wantName {
				t.Errorf("Name() = %q, want %q", p.Name(), tt.wantName)
			}
		})
	}
}

func TestLookupErrorListsNames(t *testing.T) {
	_, err := Lookup("nope", Options{})
	for _, n := range []string{"eager", "static-N"} {
		if err == nil || !strings.Contains(err.Error(), n) {
			t.Errorf("error %v does not list %q", err, n)
		}
	}
}

func TestRegisterFamily(t *testing.T) {
	Register(Entry{Name: "testfam-N", New: func(arg string, _ Options) (controller.Policy, error) {
		if arg != "7" {
			t.Errorf("arg = %q, want 7", arg)
		}
		return NewEager(), nil
	}})
	t.Cleanup(func() { regMu.Lock(); delete(registry, "testfam-N"); regMu.Unlock() })
	if _, err := Lookup("testfam-7", Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestStaticNLimitsAgents(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		agents int
	}{
		{name: "one", n: 1, agents: 4},
		{name: "three", n: 3, agents: 7},
		{name: "more slots than agents", n: 8, agents: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, err := NewStaticN(tt.n)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				var (
					mu                  sync.Mutex
					running, maxRunning int
				)
				for i := 0; i < tt.agents; i++ {
					go func() {
						a := &controller.Agent{}
						if err := p.AgentReady(ctx, a); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						running++
						maxRunning = max(maxRunning, running)
						mu.Unlock()
						time.Sleep(time.Second)
						mu.Lock()
						running--
						mu.Unlock()
						p.AgentDone(a, nil)
					}()
				}
				synctest.Wait()
				time.Sleep(time.Hour)
				mu.Lock()
				defer mu.Unlock()
				if want := min(tt.n, tt.agents); maxRunning != want {
					t.Errorf("max concurrent agents = %d, want %d", maxRunning, want)
				}
				if running != 0 {
					t.Errorf("%d agents still running", running)
				}
			})
		})
	}
}

func TestStaticNCancel(t *testing.T) {
	p, _ := NewStaticN(1)
	if err := p.AgentReady(context.Background(), &controller.Agent{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.AgentReady(ctx, &controller.Agent{}); !errors.Is(err, context.Canceled) {
		t.Errorf("AgentReady on a full policy with a cancelled ctx = %v, want context.Canceled", err)
	}
}
