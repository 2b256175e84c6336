package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ContentDigests returns the distinct content and pack blob digests (hex)
// a tree manifest in blobDir references, or nil when digest names no tree
// manifest there (a tar.gz blob, or a blob already removed).
func ContentDigests(blobDir, digest string) ([]string, error) {
	p, err := RefPath(blobDir, Ref{Digest: digest, Format: FormatTree})
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	err = decodeManifest(bytes.NewReader(data), func(e *entry) error {
		h := e.Digest
		if e.Pack != "" {
			h = e.Pack
		}
		if h != "" && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
		return nil
	})
	return out, err
}

// RemoveBlob deletes the blob (tar.gz or tree manifest) with the given
// digest from blobDir; the content blobs a manifest names are left to
// RemoveContent. A missing blob is not an error.
func RemoveBlob(blobDir, digest string) error {
	var errs []error
	for _, format := range []string{"", FormatTree} {
		p, err := RefPath(blobDir, Ref{Digest: digest, Format: format})
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RemoveContent deletes the content blob with hex digest h; a missing blob
// is not an error.
func RemoveContent(blobDir, h string) error {
	if _, err := ParseDigest(DigestPrefix + h); err != nil {
		return err
	}
	if err := os.Remove(contentPath(blobDir, h)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ListContent returns the hex digests of every content blob in blobDir.
func ListContent(blobDir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(blobDir, dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing content blobs: %w", err)
	}
	var out []string
	for _, e := range ents {
		if _, err := ParseDigest(DigestPrefix + e.Name()); err == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
