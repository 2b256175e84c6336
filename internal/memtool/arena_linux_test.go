//go:build linux

package memtool

import (
	"bytes"
	"compress/flate"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestArenaKeepsItsMapping: after Reserve the curve grows and shrinks in
// the one mapping (no mmap or munmap while it runs, which fail at a
// cgroup's limit under the OOM hold); what a shrink returns is no longer
// resident, what stays is; a grow past the reservation maps one more
// chunk, and a regrow after a shrink fills the mappings it has before
// mapping again; Free unmaps everything.
func TestArenaKeepsItsMapping(t *testing.T) {
	const mib = 1 << 20
	a := newArena()
	t.Cleanup(func() { _ = a.Free() })
	if err := a.Reserve(8 * mib); err != nil {
		t.Fatal(err)
	}
	resident := func(from, to uintptr) (n int) {
		c := a.chunks[0]
		vec := make([]byte, (to-from)/a.page)
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Add(c.addr, from)), to-from, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatal(e)
		}
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	pages := func(b uintptr) int { return int(b / a.page) }
	if got := resident(0, 8*mib); got != 0 {
		t.Fatalf("%d pages resident after Reserve, want 0", got)
	}
	for _, step := range []struct{ size, stillThere int64 }{{6 * mib, 6 * mib}, {1 * mib, 1 * mib}, {5 * mib, 5 * mib}} {
		if err := a.Resize(step.size); err != nil {
			t.Fatal(err)
		}
		if a.Size() != step.size || len(a.chunks) != 1 {
			t.Fatalf("Resize(%d): size %d in %d mappings, want one mapping", step.size, a.Size(), len(a.chunks))
		}
		if got, want := resident(0, uintptr(step.size)), pages(uintptr(step.stillThere)); got != want {
			t.Fatalf("Resize(%d): %d pages resident below the size, want %d", step.size, got, want)
		}
		if got := resident(uintptr(step.size), 8*mib); got != 0 {
			t.Fatalf("Resize(%d): %d pages resident above the size, want 0", step.size, got)
		}
	}
	if err := a.Resize(10 * mib); err != nil {
		t.Fatal(err)
	}
	if a.Size() != 10*mib || len(a.chunks) != 2 || a.chunks[1].used != 2*mib {
		t.Fatalf("grow past the reservation: size %d, %d mappings", a.Size(), len(a.chunks))
	}
	if err := a.Resize(3 * mib); err != nil {
		t.Fatal(err)
	}
	if a.chunks[1].used != 0 || a.chunks[0].used != 3*mib {
		t.Fatalf("shrink from the second mapping into the first: used %d and %d", a.chunks[0].used, a.chunks[1].used)
	}
	if err := a.Resize(10 * mib); err != nil { // regrow: fills the first mapping, then the second
		t.Fatal(err)
	}
	if len(a.chunks) != 2 || a.chunks[0].used != 8*mib || a.chunks[1].used != 2*mib {
		t.Fatalf("regrow: %d mappings, used %d and %d; want the same two, full", len(a.chunks), a.chunks[0].used, a.chunks[1].used)
	}
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	if a.Size() != 0 || len(a.chunks) != 0 {
		t.Fatalf("after Free: size %d, %d mappings", a.Size(), len(a.chunks))
	}
}

// TestArenaPagesCompressLikeRealMemory: each page the arena writes
// compresses to about a third, as typical anonymous memory does in zram
// (pageNoise), not to almost nothing; two arenas hold the same page at the
// same index, as sibling sandboxes running one program do (what census
// counts).
func TestArenaPagesCompressLikeRealMemory(t *testing.T) {
	const size = 1 << 20
	var pages [2][]byte
	for i := range pages {
		a := newArena()
		t.Cleanup(func() { _ = a.Free() })
		if err := a.Resize(size); err != nil {
			t.Fatal(err)
		}
		pages[i] = bytes.Clone(unsafe.Slice((*byte)(a.chunks[0].addr), size))
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Fatal("two arenas of one size hold different pages")
	}
	page := os.Getpagesize()
	var compressed int
	for off := 0; off < size; off += page {
		var buf bytes.Buffer
		w, err := flate.NewWriter(&buf, flate.BestSpeed)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pages[0][off : off+page]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		compressed += buf.Len()
	}
	if ratio := float64(compressed) / size; ratio < 0.25 || ratio > 0.5 {
		t.Fatalf("the arena's pages compress to %.3f of their size, want about a third (0.25-0.5)", ratio)
	}
}
