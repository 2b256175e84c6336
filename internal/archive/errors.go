package archive

import "errors"

var (
	// ErrDigestMismatch means a blob's sha256 differs from the digest it was
	// expected to have: the blob is corrupt or was tampered with.
	ErrDigestMismatch = errors.New("archive: digest mismatch")
	// ErrUnsafeEntry means an archive entry would write outside the
	// destination, through a symlink, or create a device node; nothing is
	// written for that entry.
	ErrUnsafeEntry = errors.New("archive: unsafe entry")
	// ErrUnsupported means CaptureTree met a file type it cannot record
	// faithfully (a device node other than an overlay whiteout).
	ErrUnsupported = errors.New("archive: unsupported file type")
	// ErrNotEmpty means the extraction destination exists and is not empty.
	ErrNotEmpty = errors.New("archive: destination not empty")
	// ErrBadDigest means a digest string is not "sha256:" followed by 64
	// lowercase hex digits.
	ErrBadDigest = errors.New("archive: malformed digest")
)
