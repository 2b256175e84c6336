package policy

import (
	"context"
	"fmt"

	"github.com/tenon-dev/tenon/internal/controller"
)

// StaticN lets at most N agents run attempts at once (the fixed-concurrency
// baseline: Static-Low and Static-High are two values of N). Waiting agents
// get slots in arrival order of their AgentReady calls.
type StaticN struct {
	controller.Nop
	n     int
	slots chan struct{}
}

var _ controller.Policy = (*StaticN)(nil)

// NewStaticN returns a Static-N policy; n must be at least 1.
func NewStaticN(n int) (*StaticN, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: static-N needs N >= 1, got %d", ErrBadOption, n)
	}
	return &StaticN{n: n, slots: make(chan struct{}, n)}, nil
}

// Name returns "static-N", e.g. "static-4".
func (s *StaticN) Name() string { return fmt.Sprintf("static-%d", s.n) }

// N is the concurrency limit.
func (s *StaticN) N() int { return s.n }

// AgentReady blocks until a slot is free or ctx is done.
func (s *StaticN) AgentReady(ctx context.Context, _ *controller.Agent) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AgentDone frees the agent's slot.
func (s *StaticN) AgentDone(*controller.Agent, error) {
	select {
	case <-s.slots:
	default:
		panic("policy: static-N AgentDone without AgentReady")
	}
}
