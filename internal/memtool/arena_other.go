//go:build !linux

package memtool

// arena is unsupported off Linux: every Resize above zero fails.
type arena struct{ done <-chan struct{} }

func newArena() *arena { return &arena{} }

func (a *arena) Size() int64 { return 0 }

func (a *arena) Resize(n int64) error {
	if n > 0 {
		return ErrUnsupported
	}
	return nil
}

func (a *arena) Free() error { return nil }

func (a *arena) Reserve(n int64) error { return nil }
