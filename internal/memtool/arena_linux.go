//go:build linux

package memtool

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// chunk is one anonymous mapping (or what is left of it after a shrink).
type chunk struct {
	addr unsafe.Pointer
	size uintptr
}

// arena is resident memory outside the Go heap: anonymous private mappings,
// every page written on allocation, returned to the kernel with munmap.
type arena struct {
	page   uintptr
	chunks []chunk
	size   int64
}

func newArena() *arena { return &arena{page: uintptr(os.Getpagesize())} }

// Size is the resident size of the arena in bytes (a multiple of the page size).
func (a *arena) Size() int64 { return a.size }

// Resize grows or shrinks the arena to n bytes rounded up to a page.
func (a *arena) Resize(n int64) error {
	if n < 0 {
		n = 0
	}
	want := int64((uintptr(n) + a.page - 1) &^ (a.page - 1))
	switch {
	case want > a.size:
		return a.grow(uintptr(want - a.size))
	case want < a.size:
		return a.shrink(uintptr(a.size - want))
	}
	return nil
}

func (a *arena) grow(d uintptr) error {
	p, err := unix.MmapPtr(-1, 0, nil, d, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("mapping %d bytes: %w", d, err)
	}
	b := unsafe.Slice((*byte)(p), d)
	for i := uintptr(0); i < d; i += a.page {
		b[i] = byte(i/a.page) | 1 // one byte per page, never zero: the page is really resident
	}
	a.chunks = append(a.chunks, chunk{addr: p, size: d})
	a.size += int64(d)
	return nil
}

func (a *arena) shrink(d uintptr) error {
	for d > 0 && len(a.chunks) > 0 {
		c := &a.chunks[len(a.chunks)-1]
		cut := min(d, c.size)
		if err := unix.MunmapPtr(unsafe.Add(c.addr, c.size-cut), cut); err != nil {
			return fmt.Errorf("unmapping %d bytes: %w", cut, err)
		}
		c.size -= cut
		if c.size == 0 {
			a.chunks = a.chunks[:len(a.chunks)-1]
		}
		a.size -= int64(cut)
		d -= cut
	}
	return nil
}

// Free returns all memory to the kernel.
func (a *arena) Free() error { return a.shrink(uintptr(a.size)) }
