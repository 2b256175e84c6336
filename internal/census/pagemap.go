package census

import (
	"encoding/binary"
	"fmt"
	"io"
)

// PagemapEntry is one 64-bit entry of /proc/PID/pagemap
// (Documentation/admin-guide/mm/pagemap.rst).
type PagemapEntry uint64

// Pagemap bits.
const (
	PMPresent    = 63 // page present in RAM
	PMSwapped    = 62 // page in swap
	PMFileShared = 61 // file page or shared anonymous page
	pmPFNMask    = 1<<55 - 1
)

func (e PagemapEntry) bit(b uint) bool { return uint64(e)>>b&1 == 1 }

// Present reports bit 63.
func (e PagemapEntry) Present() bool { return e.bit(PMPresent) }

// Swapped reports bit 62.
func (e PagemapEntry) Swapped() bool { return e.bit(PMSwapped) }

// FileShared reports bit 61: a file page or a shared anonymous page.
func (e PagemapEntry) FileShared() bool { return e.bit(PMFileShared) }

// PFN is the page frame number (bits 0–54) of a present page; zero when
// the reader lacks CAP_SYS_ADMIN or the page is not present.
func (e PagemapEntry) PFN() uint64 {
	if !e.Present() {
		return 0
	}
	return uint64(e) & pmPFNMask
}

// readUint64s reads n native-endian 64-bit words at word index idx of r
// (the layout of pagemap and kpageflags) into dst[:n].
func readUint64s(r io.ReaderAt, idx uint64, dst []uint64, buf []byte) ([]byte, error) {
	need := len(dst) * 8
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	buf = buf[:need]
	got, err := r.ReadAt(buf, int64(idx*8))
	if got < need {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return buf, fmt.Errorf("reading %d words at index %d: %w", len(dst), idx, err)
	}
	for i := range dst {
		dst[i] = binary.NativeEndian.Uint64(buf[i*8:])
	}
	return buf, nil
}

// ReadPagemap reads the entries for n pages starting at virtual address
// addr from a pagemap file.
func ReadPagemap(r io.ReaderAt, addr uint64, n int, pageSize uint64) ([]PagemapEntry, error) {
	words := make([]uint64, n)
	if _, err := readUint64s(r, addr/pageSize, words, nil); err != nil {
		return nil, fmt.Errorf("pagemap at %#x: %w", addr, err)
	}
	out := make([]PagemapEntry, n)
	for i, w := range words {
		out[i] = PagemapEntry(w)
	}
	return out, nil
}
