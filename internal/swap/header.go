package swap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Label is the swap header label that marks a device set up by tenon.
const Label = "tenon"

// Layout of the Linux swap header (include/linux/swap.h, union swap_header):
// the "info" part starts at 1024 and the magic ends the first page.
const (
	infoOffset    = 1024
	versionOffset = infoOffset      // u32 version (1)
	lastPageOff   = infoOffset + 4  // u32 last_page
	badPagesOff   = infoOffset + 8  // u32 nr_badpages
	uuidOffset    = infoOffset + 12 // 16 bytes
	labelOffset   = infoOffset + 28 // 16 bytes
	magic         = "SWAPSPACE2"
	minPages      = 10 // the kernel needs a few pages beyond the header
	maxHeaderPage = 64 << 10
)

// HeaderInfo is what a swap header says.
type HeaderInfo struct {
	PageSize int
	Version  uint32
	LastPage uint32
	UUID     [16]byte
	Label    string
}

// Header builds the first page of a swap area of size bytes: what mkswap
// writes, with the given label (at most 16 bytes) and UUID. Integers are
// little-endian, as on every platform tenon runs on (amd64, arm64).
func Header(size int64, pageSize int, label string, uuid [16]byte) ([]byte, error) {
	if pageSize < 4096 || pageSize&(pageSize-1) != 0 || pageSize > maxHeaderPage {
		return nil, fmt.Errorf("%w: page size %d", ErrBadSize, pageSize)
	}
	pages := size / int64(pageSize)
	if pages < minPages {
		return nil, fmt.Errorf("%w: %d bytes is less than %d pages", ErrBadSize, size, minPages)
	}
	if pages-1 > int64(^uint32(0)) {
		return nil, fmt.Errorf("%w: %d bytes is too large for a swap header", ErrBadSize, size)
	}
	if len(label) > 16 {
		return nil, fmt.Errorf("swap: label %q is longer than 16 bytes", label)
	}
	h := make([]byte, pageSize)
	le := binary.LittleEndian
	le.PutUint32(h[versionOffset:], 1)
	le.PutUint32(h[lastPageOff:], uint32(pages-1))
	le.PutUint32(h[badPagesOff:], 0)
	copy(h[uuidOffset:uuidOffset+16], uuid[:])
	copy(h[labelOffset:labelOffset+16], label)
	copy(h[pageSize-len(magic):], magic)
	return h, nil
}

// ParseHeader reads a swap header from the start of r, trying page sizes from
// 4 KiB to 64 KiB. It returns ErrNoHeader when no swap magic is found.
func ParseHeader(r io.Reader) (HeaderInfo, error) {
	buf := make([]byte, maxHeaderPage)
	n, err := io.ReadFull(r, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return HeaderInfo{}, fmt.Errorf("reading swap header: %w", err)
	}
	buf = buf[:n]
	for ps := 4096; ps <= maxHeaderPage && ps <= len(buf); ps *= 2 {
		if string(buf[ps-len(magic):ps]) != magic {
			continue
		}
		le := binary.LittleEndian
		h := HeaderInfo{
			PageSize: ps,
			Version:  le.Uint32(buf[versionOffset:]),
			LastPage: le.Uint32(buf[lastPageOff:]),
			Label:    string(bytes.TrimRight(buf[labelOffset:labelOffset+16], "\x00")),
		}
		copy(h.UUID[:], buf[uuidOffset:uuidOffset+16])
		return h, nil
	}
	return HeaderInfo{}, ErrNoHeader
}
