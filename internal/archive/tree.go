package archive

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// FormatTree is Ref.Format of a tree artifact: a gzip-compressed JSON-lines
// manifest (one entry per node, in lexical walk order, the root first) whose
// regular files name their content by sha256; each distinct content is one
// uncompressed blob in the blob directory's data/ subdirectory, shared by
// every file, generation and agent with those bytes, except that small
// contents new to a capture are concatenated into pack blobs (also in
// data/, named by their own sha256; an entry names pack and offset), which
// saves creating and fsyncing a file per small file. The empty Format is
// the older single tar.gz blob, which ExtractRef still reads.
const FormatTree = "tree"

// manifestSuffix is the file-name suffix of a tree manifest blob.
const manifestSuffix = ".tree.gz"

// dataDir is the subdirectory of the blob directory holding content blobs.
const dataDir = "data"

// Entry type codes in a manifest (tar type flags, plus 'w' for an overlay
// whiteout).
const (
	typeReg      = tar.TypeReg
	typeDir      = tar.TypeDir
	typeSymlink  = tar.TypeSymlink
	typeLink     = tar.TypeLink
	typeFifo     = tar.TypeFifo
	typeWhiteout = 'w'
)

// entry is one manifest line.
type entry struct {
	Name   string            `json:"n"`
	Type   byte              `json:"t"`
	Mode   int64             `json:"m"`
	UID    int               `json:"u,omitempty"`
	GID    int               `json:"g,omitempty"`
	MTime  int64             `json:"mt"` // unix nanoseconds
	Link   string            `json:"l,omitempty"`
	Size   int64             `json:"s,omitempty"`
	Digest string            `json:"d,omitempty"` // hex sha256 of the content (regular files with Size > 0)
	Pack   string            `json:"p,omitempty"` // hex digest of the pack blob holding the content ("": its own blob)
	Off    int64             `json:"o,omitempty"` // offset of the content in Pack
	Xattrs map[string]string `json:"x,omitempty"`
}

// header turns a manifest entry into the tar header the extractor checks
// and applies, so both formats share one set of safety rules.
func (e *entry) header() (*tar.Header, error) {
	h := &tar.Header{
		Name:     e.Name,
		Typeflag: e.Type,
		Mode:     e.Mode,
		Uid:      e.UID,
		Gid:      e.GID,
		ModTime:  time.Unix(0, e.MTime),
		Linkname: e.Link,
	}
	if len(e.Xattrs) > 0 {
		h.PAXRecords = map[string]string{}
		for k, v := range e.Xattrs {
			h.PAXRecords[paxXattrPrefix+k] = v
		}
	}
	switch e.Type {
	case typeWhiteout:
		h.Typeflag, h.Mode = tar.TypeReg, 0
		if h.PAXRecords == nil {
			h.PAXRecords = map[string]string{}
		}
		h.PAXRecords[paxWhiteout] = "1"
	case typeReg:
		if e.Size < 0 {
			return nil, unsafeEntry(e.Name, "negative size")
		}
		if e.Size > 0 {
			if _, err := ParseDigest(DigestPrefix + e.Digest); err != nil {
				return nil, unsafeEntry(e.Name, "bad content digest")
			}
			if _, err := ParseDigest(DigestPrefix + e.Pack); e.Pack != "" && err != nil || e.Off < 0 {
				return nil, unsafeEntry(e.Name, "bad pack reference")
			}
		}
		h.Size = e.Size
	}
	return h, nil
}

// RefPath returns where the blob named by ref (a tar.gz blob or a tree
// manifest, by ref.Format) lives in blobDir.
func RefPath(blobDir string, ref Ref) (string, error) {
	h, err := ParseDigest(ref.Digest)
	if err != nil {
		return "", err
	}
	switch ref.Format {
	case "":
		return filepath.Join(blobDir, h+blobSuffix), nil
	case FormatTree:
		return filepath.Join(blobDir, h+manifestSuffix), nil
	}
	return "", fmt.Errorf("%w: unknown artifact format %q", ErrBadDigest, ref.Format)
}

// contentPath is where the content blob with hex digest h lives.
func contentPath(blobDir, h string) string { return filepath.Join(blobDir, dataDir, h) }

// encodeManifest writes entries as gzip-compressed JSON lines.
func encodeManifest(w io.Writer, entries []entry) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(zw, 256<<10)
	enc := json.NewEncoder(bw)
	for i := range entries {
		if err := enc.Encode(&entries[i]); err != nil {
			return fmt.Errorf("encoding manifest: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// decodeManifest calls fn for each entry of a manifest stream.
func decodeManifest(r io.Reader, fn func(*entry) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("reading manifest: %w", err)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(zr, 256<<10))
	for {
		var e entry
		if err := dec.Decode(&e); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading manifest: %w", err)
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
}
