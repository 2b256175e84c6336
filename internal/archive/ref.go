package archive

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// DigestPrefix is the algorithm prefix of every digest.
const DigestPrefix = "sha256:"

// blobSuffix is the file-name suffix of a blob in the blob directory.
const blobSuffix = ".tar.gz"

// Ref names a captured blob.
type Ref struct {
	Digest string `json:"digest"` // "sha256:<hex>" of the compressed blob (tar.gz or tree manifest)
	Size   int64  `json:"size"`   // compressed size in bytes of that blob
	Files  int    `json:"files"`  // number of entries (files, dirs, links, whiteouts), the root included
	Bytes  int64  `json:"bytes"`  // uncompressed payload bytes of regular files
	// Format is "" for a single tar.gz blob, FormatTree for a manifest
	// naming per-content blobs.
	Format string `json:"format,omitempty"`
	// Written is how many bytes the capture wrote to the blob directory:
	// Size for a tar.gz blob; the manifest plus the content not stored
	// before for a tree (unchanged and shared content costs nothing).
	Written int64 `json:"written,omitempty"`
}

// ParseDigest checks a digest string and returns its hex part.
func ParseDigest(d string) (string, error) {
	h, ok := strings.CutPrefix(d, DigestPrefix)
	if !ok || len(h) != 64 {
		return "", fmt.Errorf("%w: %q", ErrBadDigest, d)
	}
	if _, err := hex.DecodeString(h); err != nil || strings.ToLower(h) != h {
		return "", fmt.Errorf("%w: %q", ErrBadDigest, d)
	}
	return h, nil
}
