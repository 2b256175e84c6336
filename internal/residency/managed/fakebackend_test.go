package managed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// dirBackend is a sandbox.Backend whose sandboxes are directories: enough
// for the residency adapters (writable layer, RootfsFrom, process count).
type dirBackend struct {
	root string

	mu    sync.Mutex
	boxes map[string]sandbox.Spec
	bg    map[string]int // background processes per sandbox
}

func newDirBackend(root string) *dirBackend {
	return &dirBackend{root: root, boxes: map[string]sandbox.Spec{}, bg: map[string]int{}}
}

func (b *dirBackend) Name() string             { return "dir" }
func (b *dirBackend) SupportsRootfsFrom() bool { return true }
func (b *dirBackend) layer(id string) string   { return filepath.Join(b.root, id, "rootfs") }
func (b *dirBackend) setBackground(id string, n int) {
	b.mu.Lock()
	b.bg[id] = n
	b.mu.Unlock()
}

func (b *dirBackend) WritableLayer(id string) (string, error) {
	if _, err := b.Info(context.Background(), id); err != nil {
		return "", err
	}
	return b.layer(id), nil
}

func (b *dirBackend) Create(ctx context.Context, s sandbox.Spec) (sandbox.Info, error) {
	if err := sandbox.ValidateID(s.ID); err != nil {
		return sandbox.Info{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.boxes[s.ID]; ok {
		return sandbox.Info{}, sandbox.ErrExists
	}
	if err := os.MkdirAll(filepath.Join(b.root, s.ID), 0o755); err != nil {
		return sandbox.Info{}, err
	}
	var err error
	if s.RootfsFrom != "" {
		err = os.Rename(s.RootfsFrom, b.layer(s.ID))
	} else {
		err = os.Mkdir(b.layer(s.ID), 0o755)
	}
	if err == nil {
		err = os.MkdirAll(s.Workspace, 0o755)
	}
	if err != nil {
		return sandbox.Info{}, err
	}
	b.boxes[s.ID] = s
	return sandbox.Info{ID: s.ID, Labels: s.Labels}, nil
}

func (b *dirBackend) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	if _, err := b.Info(ctx, id); err != nil {
		return sandbox.ExecResult{}, err
	}
	return sandbox.ExecResult{}, nil
}

func (b *dirBackend) Pause(ctx context.Context, id string) error  { return nil }
func (b *dirBackend) Resume(ctx context.Context, id string) error { return nil }

func (b *dirBackend) Stats(ctx context.Context, id string) (sandbox.Stats, error) {
	if _, err := b.Info(ctx, id); err != nil {
		return sandbox.Stats{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return sandbox.Stats{WorkingSet: 64 << 20, Procs: 1 + b.bg[id]}, nil
}

func (b *dirBackend) Info(ctx context.Context, id string) (sandbox.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.boxes[id]
	if !ok {
		return sandbox.Info{}, fmt.Errorf("sandbox %q: %w", id, sandbox.ErrNotFound)
	}
	return sandbox.Info{ID: id, Labels: s.Labels}, nil
}

func (b *dirBackend) Destroy(ctx context.Context, id string) error {
	b.mu.Lock()
	delete(b.boxes, id)
	delete(b.bg, id)
	b.mu.Unlock()
	return os.RemoveAll(filepath.Join(b.root, id))
}

func (b *dirBackend) Close() error { return nil }

func (b *dirBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.boxes)
}
