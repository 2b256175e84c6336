package controller

import (
	"context"

	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Nop implements every Policy hook as "no control". Policies embed it and
// override the hooks they need.
type Nop struct{}

// Start does nothing.
func (Nop) Start(context.Context, Env) error { return nil }

// Stop does nothing.
func (Nop) Stop(context.Context) error { return nil }

// AgentReady returns at once unless ctx is done.
func (Nop) AgentReady(ctx context.Context, _ *Agent) error { return ctx.Err() }

// AgentDone does nothing.
func (Nop) AgentDone(*Agent, error) {}

// ActionReady grants at once unless ctx is done.
func (Nop) ActionReady(ctx context.Context, _ *Agent, _ *trajectory.Action) (Grant, error) {
	return Grant{}, ctx.Err()
}

// ActionDone does nothing.
func (Nop) ActionDone(*Agent, Grant, Outcome) {}

// SandboxUp does nothing.
func (Nop) SandboxUp(*Agent, sandbox.Info) {}

// SandboxDown does nothing.
func (Nop) SandboxDown(*Agent, string) {}
