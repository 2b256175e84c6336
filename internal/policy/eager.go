package policy

import "github.com/tenon-dev/tenon/internal/controller"

// Eager runs everything at once: no admission, no gating, no limit.
type Eager struct{ controller.Nop }

var _ controller.Policy = (*Eager)(nil)

// NewEager returns the Eager policy.
func NewEager() *Eager { return &Eager{} }

// Name returns "eager".
func (*Eager) Name() string { return "eager" }
