//go:build linux

package memtool

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The arena grows by touching pages and shrinks with madvise(MADV_DONTNEED),
// inside mappings it keeps: after Reserve, one mapping of the profile's
// peak made before the curve starts. A sandbox at its cgroup's limit is
// where the curve runs under tenon's OOM hold, and there a system call
// that must charge kernel memory fails with ENOMEM instead of waiting
// (cgroup v1 with oom_kill_disable; only user-mode page faults wait for
// memory): mmap needs a new VMA, and munmap of part of a mapping splits
// one. Mapping a chunk per step and unmapping the tail on the way down
// made 10 actions in 8 live replays of the real traces at 1 and 2 GiB exit
// early with "unmapping (or mapping) N bytes: cannot allocate memory": a
// curve cut short, its sandbox held at its peak meanwhile. Touching
// a page is a user fault, which waits at the limit like a real tool's
// allocation, and MADV_DONTNEED frees without splitting anything. A grow
// past the reservation maps one more chunk, retrying ENOMEM for a while
// (mmapRetryFor) as a real allocator's caller would see its malloc block.

// chunk is one anonymous mapping: size bytes mapped, the first used of
// them resident (written).
type chunk struct {
	addr unsafe.Pointer
	size uintptr
	used uintptr
}

// arena is resident memory outside the Go heap: anonymous private mappings,
// every page written on allocation (pageNoise), returned to the kernel with
// MADV_DONTNEED and unmapped by Free.
type arena struct {
	page   uintptr
	chunks []chunk // full ones first, then at most one partly used, then empty ones
	size   int64   // resident bytes: the sum of the chunks' used
	// done, when closed, ends mapChunk's retries (RunResult's context).
	done <-chan struct{}
}

// pageNoise is what the arena writes into its pages: the first third of
// each page is random (a slice of pageNoise picked by the page's index, so
// sibling sandboxes' arenas hold the same pages, as their copies of one
// program do), the rest stays zero. Such a page compresses to about a
// third in zram, as typical anonymous memory does (what
// residency.DefaultCompressionRatio and tenon sim --swap-ratio assume).
// With one byte per page, as the arena wrote before, zram kept 68 MiB
// paged out in 2 MiB (TestLivePageOutTier): a live page-out freed nearly
// all it paged out and brought it back almost for free, which made the
// page-out tier look far better in live replays than on real memory. It
// is made on the first grow, and small: every tenon process links this
// package, and the tool's own memory counts in its sandbox beside the
// curve.
var pageNoise = sync.OnceValue(func() []byte {
	b := make([]byte, 64<<10)
	_, _ = rand.NewChaCha8([32]byte{'t', 'e', 'n', 'o', 'n'}).Read(b)
	return b
})

// mmapRetryFor bounds the retries of an mmap that failed with ENOMEM or
// EAGAIN (the cgroup at its limit); the replay's action timeout bounds
// the action anyway.
const mmapRetryFor = 30 * time.Second

func newArena() *arena { return &arena{page: uintptr(os.Getpagesize())} }

// Size is the resident size of the arena in bytes (a multiple of the page size).
func (a *arena) Size() int64 { return a.size }

// Reserve maps n bytes (rounded up to a page) for the curve to grow into,
// so that it need not map while it runs; nothing becomes resident. It does
// nothing once the arena has a mapping. On failure the arena stays usable
// and grows by mapping as it goes.
func (a *arena) Reserve(n int64) error {
	if n <= 0 || len(a.chunks) > 0 {
		return nil
	}
	return a.mapChunk(a.round(n))
}

func (a *arena) round(n int64) uintptr {
	return (uintptr(n) + a.page - 1) &^ (a.page - 1)
}

// Resize grows or shrinks the arena to n bytes rounded up to a page.
func (a *arena) Resize(n int64) error {
	if n < 0 {
		n = 0
	}
	want := int64(a.round(n))
	switch {
	case want > a.size:
		return a.grow(uintptr(want - a.size))
	case want < a.size:
		return a.shrink(uintptr(a.size - want))
	}
	return nil
}

// grow writes d more bytes, into the first chunk with room (shrink empties
// chunks from the last, so the used ones stay a prefix), mapping a new
// chunk only when every chunk is full.
func (a *arena) grow(d uintptr) error {
	i := 0
	for d > 0 {
		for i < len(a.chunks) && a.chunks[i].used == a.chunks[i].size {
			i++
		}
		if i == len(a.chunks) {
			if err := a.mapChunk(d); err != nil {
				return err
			}
		}
		c := &a.chunks[i]
		n := min(d, c.size-c.used)
		b := unsafe.Slice((*byte)(unsafe.Add(c.addr, c.used)), n)
		noise, fill := pageNoise(), a.page/3
		for off := uintptr(0); off < n; off += a.page {
			idx := (c.used + off) / a.page
			o := idx * 4093 % (uintptr(len(noise)) - fill)
			copy(b[off:off+fill], noise[o:])
			b[off] |= 1 // never a zero page: it is really resident
		}
		c.used += n
		a.size += int64(n)
		d -= n
	}
	return nil
}

// mapChunk maps a new chunk of d bytes, retrying ENOMEM and EAGAIN.
func (a *arena) mapChunk(d uintptr) error {
	deadline := time.Now().Add(mmapRetryFor)
	wait := time.Millisecond
	for {
		p, err := unix.MmapPtr(-1, 0, nil, d, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err == nil {
			// Page by page, as the curve asks: a transparent huge page
			// would make up to 2 MiB resident past Size (THP "always"),
			// and khugepaged could fill in what the curve has not reached.
			_ = unix.Madvise(unsafe.Slice((*byte)(p), d), unix.MADV_NOHUGEPAGE)
			a.chunks = append(a.chunks, chunk{addr: p, size: d})
			return nil
		}
		if !errors.Is(err, unix.ENOMEM) && !errors.Is(err, unix.EAGAIN) || time.Now().After(deadline) {
			return fmt.Errorf("mapping %d bytes: %w", d, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-a.done:
			t.Stop()
			return fmt.Errorf("mapping %d bytes: %w (gave up retrying: interrupted)", d, err)
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// shrink returns d resident bytes, the last written first, with
// MADV_DONTNEED: the pages go back to the kernel, the mappings stay.
func (a *arena) shrink(d uintptr) error {
	for i := len(a.chunks) - 1; d > 0 && i >= 0; i-- {
		c := &a.chunks[i]
		cut := min(d, c.used)
		if cut == 0 {
			continue
		}
		if err := unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(c.addr, c.used-cut)), cut), unix.MADV_DONTNEED); err != nil {
			return fmt.Errorf("returning %d bytes: %w", cut, err)
		}
		c.used -= cut
		a.size -= int64(cut)
		d -= cut
	}
	return nil
}

// Free returns all memory to the kernel and unmaps the arena. An munmap
// that fails with ENOMEM (the mapping had merged with a neighbour and
// would need splitting, at the limit) is not an error: the pages are
// already back, and the mapping goes when the process exits.
func (a *arena) Free() error {
	if err := a.shrink(uintptr(a.size)); err != nil {
		return err
	}
	var errs []error
	for _, c := range a.chunks {
		if err := unix.MunmapPtr(c.addr, c.size); err != nil && !errors.Is(err, unix.ENOMEM) {
			errs = append(errs, fmt.Errorf("unmapping %d bytes: %w", c.size, err))
		}
	}
	a.chunks = nil
	return errors.Join(errs...)
}
