package archive

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"
)

// ExtractTar extracts a tar stream (gzip'd or not) into dstDir, which must
// be empty or missing, through the same checked extractor as ExtractRef (no
// digest: the caller trusts the archive's origin, not its entries). strip
// drops that many leading path components of every name (tar's
// --strip-components; hard link targets alike); an entry left with no name
// is skipped. PAX records (overlay xattrs, tenon's whiteout marker) are
// ignored: a workspace is not a captured layer. It returns the number of
// entries extracted.
func ExtractTar(ctx context.Context, r io.Reader, dstDir string, strip int) (int, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var in io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, fmt.Errorf("reading archive: %w", err)
		}
		in = zr
	}
	files := 0
	err := extractEntries(ctx, tar.NewReader(in), dstDir, "archive", func(x *extractor, hdr *tar.Header, tr *tar.Reader) error {
		name, ok := stripComponents(hdr.Name, strip)
		if !ok {
			return nil
		}
		hdr.Name = name
		// A workspace is no capture: the archive's PAX records (tenon's
		// whiteout marker, overlay xattrs) never reach the disk.
		hdr.PAXRecords = nil
		if hdr.Typeflag == tar.TypeLink {
			if hdr.Linkname, ok = stripComponents(hdr.Linkname, strip); !ok {
				return unsafeEntry(hdr.Name, "hard link target stripped away")
			}
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
		files++
		return nil
	})
	return files, err
}

// stripComponents drops n leading components of a tar name; ok is false
// when nothing is left.
func stripComponents(name string, n int) (string, bool) {
	for range n {
		_, rest, found := strings.Cut(strings.TrimLeft(name, "/"), "/")
		if !found {
			return "", false
		}
		name = rest
	}
	name = strings.TrimSuffix(name, "/")
	return name, name != "" && name != "."
}
