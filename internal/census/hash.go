package census

import "github.com/zeebo/xxh3"

// Hash is the 128-bit xxh3 digest of one page's content.
type Hash = xxh3.Uint128

// HashPage hashes one page.
func HashPage(p []byte) Hash { return xxh3.Hash128(p) }

// HashPages hashes buf page by page into dst (which it returns, grown as
// needed). A short last page is zero-padded to pageSize, as the page cache
// holds the tail of a file.
func HashPages(dst []Hash, buf []byte, pageSize int) []Hash {
	for off := 0; off < len(buf); off += pageSize {
		end := off + pageSize
		if end > len(buf) {
			pad := make([]byte, pageSize)
			copy(pad, buf[off:])
			dst = append(dst, xxh3.Hash128(pad))
			break
		}
		dst = append(dst, xxh3.Hash128(buf[off:end]))
	}
	return dst
}
