//go:build !linux

package process

import (
	"context"
	"errors"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// ErrUnsupported means the process backend was used off Linux.
var ErrUnsupported = errors.New("process backend: needs Linux (namespaces and cgroups)")

// Backend is unavailable off Linux; New always fails.
type Backend struct{}

var _ sandbox.Backend = (*Backend)(nil)

// MaybeInit does nothing off Linux.
func MaybeInit() {}

// New fails with ErrUnsupported off Linux.
func New(cfg Config) (*Backend, error) { return nil, ErrUnsupported }

func (b *Backend) Name() string { return "process" }
func (b *Backend) Create(context.Context, sandbox.Spec) (sandbox.Info, error) {
	return sandbox.Info{}, ErrUnsupported
}
func (b *Backend) Exec(context.Context, string, sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return sandbox.ExecResult{}, ErrUnsupported
}
func (b *Backend) Pause(context.Context, string) error  { return ErrUnsupported }
func (b *Backend) Resume(context.Context, string) error { return ErrUnsupported }
func (b *Backend) Stats(context.Context, string) (sandbox.Stats, error) {
	return sandbox.Stats{}, ErrUnsupported
}
func (b *Backend) Memory(context.Context, string) (int64, error) { return 0, ErrUnsupported }
func (b *Backend) Sample(context.Context, string, bool) (sandbox.Stats, error) {
	return sandbox.Stats{}, ErrUnsupported
}
func (b *Backend) WorkingSet(context.Context, string) (int64, error) {
	return 0, ErrUnsupported
}
func (b *Backend) Info(context.Context, string) (sandbox.Info, error) {
	return sandbox.Info{}, ErrUnsupported
}
func (b *Backend) Destroy(context.Context, string) error { return ErrUnsupported }
func (b *Backend) Close() error                          { return nil }

// WritableLayer fails with ErrUnsupported off Linux.
func (b *Backend) WritableLayer(string) (string, error) { return "", ErrUnsupported }

// PageOut fails with ErrUnsupported off Linux.
func (b *Backend) PageOut(context.Context, string) (sandbox.PageStats, error) {
	return sandbox.PageStats{}, ErrUnsupported
}

// PageIn fails with ErrUnsupported off Linux.
func (b *Backend) PageIn(context.Context, string) (sandbox.PageStats, error) {
	return sandbox.PageStats{}, ErrUnsupported
}
