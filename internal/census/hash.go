package census

import "github.com/zeebo/xxh3"

// Hash is the 128-bit xxh3 digest of one page's content.
type Hash = xxh3.Uint128

// HashPage hashes one page.
func HashPage(p []byte) Hash { return xxh3.Hash128(p) }
