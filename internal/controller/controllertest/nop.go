// Package controllertest holds test support for code that drives or
// implements controller.Policy.
package controllertest

import (
	"context"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Nop implements every controller.Policy hook as "no control". Test
// policies embed it and override the hooks they need.
type Nop struct{}

// Start does nothing.
func (Nop) Start(context.Context, controller.Env) error { return nil }

// Stop does nothing.
func (Nop) Stop(context.Context) error { return nil }

// AgentReady returns at once unless ctx is done.
func (Nop) AgentReady(ctx context.Context, _ *controller.Agent) error { return ctx.Err() }

// AgentDone does nothing.
func (Nop) AgentDone(*controller.Agent, error) {}

// ActionReady grants at once unless ctx is done.
func (Nop) ActionReady(ctx context.Context, _ *controller.Agent, _ *trajectory.Action) (controller.Grant, error) {
	return controller.Grant{}, ctx.Err()
}

// ActionDone does nothing.
func (Nop) ActionDone(*controller.Agent, controller.Grant, controller.Outcome) {}

// SandboxUp does nothing.
func (Nop) SandboxUp(*controller.Agent, sandbox.Info) {}

// SandboxDown does nothing.
func (Nop) SandboxDown(*controller.Agent, string) {}
