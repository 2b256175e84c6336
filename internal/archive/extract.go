package archive

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ExtractRef extracts the blob named by ref from blobDir into dstDir and
// also checks its size and entry count against ref.
func ExtractRef(ctx context.Context, blobDir string, ref Ref, dstDir string) error {
	if ref.Format == FormatTree {
		_, err := ExtractTree(ctx, blobDir, ref, dstDir)
		return err
	}
	p, err := RefPath(blobDir, ref)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(p); err != nil {
		return fmt.Errorf("blob %s: %w", ref.Digest, err)
	} else if fi.Size() != ref.Size {
		return fmt.Errorf("%w: blob %s has %d bytes, recorded %d", ErrDigestMismatch, ref.Digest, fi.Size(), ref.Size)
	}
	files, err := extract(ctx, p, ref.Digest, dstDir)
	if err != nil {
		return err
	}
	if files != ref.Files {
		return fmt.Errorf("%w: blob %s extracted %d entries, recorded %d", ErrDigestMismatch, ref.Digest, files, ref.Files)
	}
	return nil
}

func extract(ctx context.Context, blobPath, digest, dstDir string) (int, error) {
	want, err := ParseDigest(digest)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(blobPath)
	if err != nil {
		return 0, fmt.Errorf("opening blob: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, 1<<20)); err != nil {
		return 0, fmt.Errorf("hashing blob: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return 0, fmt.Errorf("%w: %s is sha256:%s, want %s", ErrDigestMismatch, blobPath, got, digest)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("rewinding blob: %w", err)
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("reading blob %s: %w", digest, err)
	}
	files := 0
	err = extractEntries(ctx, tar.NewReader(zr), dstDir, "blob "+digest, func(x *extractor, hdr *tar.Header, tr *tar.Reader) error {
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
		files++
		return nil
	})
	return files, err
}

// extractEntries creates dstDir, reads tr to its end-of-archive marker and
// hands each entry (pax global headers aside) to fn with the extractor,
// then finishes the extraction; what names the stream in read errors. A
// cancelled ctx stops it between entries.
func extractEntries(ctx context.Context, tr *tar.Reader, dstDir, what string, fn func(x *extractor, hdr *tar.Header, tr *tar.Reader) error) error {
	if err := prepareDst(dstDir); err != nil {
		return err
	}
	x, err := newExtractor(dstDir)
	if err != nil {
		return err
	}
	defer x.close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", what, err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if err := fn(x, hdr, tr); err != nil {
			return err
		}
	}
	return x.finish()
}

func prepareDst(dstDir string) error {
	if err := os.MkdirAll(dstDir, 0o700); err != nil {
		return fmt.Errorf("creating destination: %w", err)
	}
	d, err := os.Open(dstDir)
	if err != nil {
		return fmt.Errorf("opening destination: %w", err)
	}
	defer d.Close()
	if names, _ := d.Readdirnames(1); len(names) > 0 {
		return fmt.Errorf("%w: %s", ErrNotEmpty, dstDir)
	}
	return nil
}

type kind uint8

const (
	kindDir kind = iota + 1
	kindFile
	kindSymlink
	kindOther
)

type dirMeta struct {
	name     string
	mode     uint32
	mtime    time.Time
	uid, gid int
	set      bool // mode, owner and mtime come from an archive entry
}

// extractor writes entries under root, relative to directory descriptors.
type extractor struct {
	root    *os.Root
	kinds   map[string]kind // every path extracted so far ("." is the root)
	dirs    []dirMeta
	dirIdx  map[string]int // index into dirs
	pname   string         // cached parent directory
	pdir    *os.File
	asRoot  bool
	copyBuf []byte
	// filler and digest are set for a tree artifact: a regular file is
	// created empty and filled from content blob digest on filler's workers.
	filler *filler
	digest string
	loc    blobLoc
	// deferred run after the filler's workers finished: hard links and
	// file xattrs, which need the file to exist.
	deferred []func() error
}

// link creates the hard link name to the already extracted file target
// (both checked names).
func (x *extractor) link(target, name string) error {
	td, err := x.root.OpenFile(path.Dir(target), os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path.Dir(target), err)
	}
	defer td.Close()
	nd, err := x.root.OpenFile(path.Dir(name), os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path.Dir(name), err)
	}
	defer nd.Close()
	if err := unix.Linkat(int(td.Fd()), path.Base(target), int(nd.Fd()), path.Base(name), 0); err != nil {
		return fmt.Errorf("creating hard link %s: %w", name, err)
	}
	return nil
}

func newExtractor(dstDir string) (*extractor, error) {
	r, err := os.OpenRoot(dstDir)
	if err != nil {
		return nil, fmt.Errorf("opening destination: %w", err)
	}
	return &extractor{
		root:    r,
		kinds:   map[string]kind{".": kindDir},
		dirIdx:  map[string]int{},
		asRoot:  os.Geteuid() == 0,
		copyBuf: make([]byte, 1<<20),
	}, nil
}

func (x *extractor) close() {
	if x.pdir != nil {
		x.pdir.Close()
	}
	x.root.Close()
}

func unsafeEntry(name, why string) error {
	return fmt.Errorf("%w: %q: %s", ErrUnsafeEntry, name, why)
}

// cleanName validates an entry name and returns it cleaned ("." for the root).
func cleanName(name string) (string, error) {
	if name == "" {
		return "", unsafeEntry(name, "empty name")
	}
	if strings.HasPrefix(name, "/") {
		return "", unsafeEntry(name, "absolute path")
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", unsafeEntry(name, `path contains ".."`)
		}
	}
	return path.Clean(name), nil
}

// parent returns a descriptor of name's parent directory, creating missing
// directories, after checking that no component is a symlink or non-directory.
func (x *extractor) parent(name string) (*os.File, error) {
	dir := path.Dir(name)
	if dir == x.pname && x.pdir != nil {
		return x.pdir, nil
	}
	cur := "."
	for _, c := range strings.Split(dir, "/") {
		if c == "." {
			continue
		}
		cur = path.Join(cur, c)
		switch x.kinds[cur] {
		case kindDir:
			continue
		case 0:
			if err := x.root.Mkdir(cur, 0o700); err != nil {
				return nil, fmt.Errorf("creating %s: %w", cur, err)
			}
			x.kinds[cur] = kindDir
			x.addDir(cur)
		case kindSymlink:
			return nil, unsafeEntry(name, fmt.Sprintf("path passes through symlink %q", cur))
		default:
			return nil, unsafeEntry(name, fmt.Sprintf("path passes through non-directory %q", cur))
		}
	}
	d, err := x.root.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	if x.pdir != nil {
		x.pdir.Close()
	}
	x.pname, x.pdir = dir, d
	return d, nil
}

func (x *extractor) entry(hdr *tar.Header, r io.Reader) error {
	name, err := cleanName(hdr.Name)
	if err != nil {
		return err
	}
	if name == "." {
		if hdr.Typeflag != tar.TypeDir {
			return unsafeEntry(hdr.Name, "root entry is not a directory")
		}
		x.addDir(".")
		x.setDirMeta(".", hdr)
		return x.setXattrs(".", hdr)
	}
	if k, ok := x.kinds[name]; ok {
		if k == kindDir && hdr.Typeflag == tar.TypeDir {
			x.setDirMeta(name, hdr)
			return x.setXattrs(name, hdr)
		}
		return unsafeEntry(hdr.Name, "duplicate entry")
	}
	pd, err := x.parent(name)
	if err != nil {
		return err
	}
	pfd, base := int(pd.Fd()), path.Base(name)
	mode := uint32(hdr.Mode) & 0o7777
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := unix.Mkdirat(pfd, base, 0o700); err != nil {
			return fmt.Errorf("creating dir %s: %w", name, err)
		}
		x.kinds[name] = kindDir
		x.addDir(name)
		x.setDirMeta(name, hdr)
		return x.setXattrs(name, hdr)
	case tar.TypeReg, tar.TypeRegA:
		if hdr.PAXRecords[paxWhiteout] == "1" {
			if err := unix.Mknodat(pfd, base, unix.S_IFCHR, 0); err != nil {
				return fmt.Errorf("creating whiteout %s: %w", name, err)
			}
			x.kinds[name] = kindOther
			return x.finishNode(pfd, base, hdr, false)
		}
		if x.filler != nil && hdr.Size > 0 {
			err = x.createForFill(pfd, base, name, mode, fillJob{digest: x.digest, loc: x.loc, size: hdr.Size,
				uid: hdr.Uid, gid: hdr.Gid, mtime: hdr.ModTime})
		} else {
			err = x.writeFile(pfd, base, name, mode, hdr, r)
		}
		if err != nil {
			return err
		}
		x.kinds[name] = kindFile
		if x.filler != nil { // the file may not exist yet
			x.deferred = append(x.deferred, func() error { return x.setXattrs(name, hdr) })
			return nil
		}
		return x.setXattrs(name, hdr)
	case tar.TypeSymlink:
		if err := checkSymlink(name, hdr.Linkname); err != nil {
			return err
		}
		if err := unix.Symlinkat(hdr.Linkname, pfd, base); err != nil {
			return fmt.Errorf("creating symlink %s: %w", name, err)
		}
		x.kinds[name] = kindSymlink
		return x.finishNode(pfd, base, hdr, false)
	case tar.TypeLink:
		target, err := cleanName(hdr.Linkname)
		if err != nil {
			return unsafeEntry(hdr.Name, fmt.Sprintf("hard link target %q is outside the tree", hdr.Linkname))
		}
		if x.kinds[target] != kindFile {
			return unsafeEntry(hdr.Name, fmt.Sprintf("hard link target %q is not a regular file extracted earlier", hdr.Linkname))
		}
		x.kinds[name] = kindFile
		if x.filler != nil { // the target may not exist yet
			x.deferred = append(x.deferred, func() error { return x.link(target, name) })
			return nil
		}
		return x.link(target, name)
	case tar.TypeFifo:
		if err := unix.Mknodat(pfd, base, unix.S_IFIFO|mode, 0); err != nil {
			return fmt.Errorf("creating fifo %s: %w", name, err)
		}
		x.kinds[name] = kindOther
		return x.finishNode(pfd, base, hdr, true)
	case tar.TypeChar, tar.TypeBlock:
		return unsafeEntry(hdr.Name, "device node")
	default:
		return unsafeEntry(hdr.Name, fmt.Sprintf("unsupported entry type %q", hdr.Typeflag))
	}
}

// checkSymlink refuses a relative target that climbs above the tree root.
// Absolute targets are kept: they resolve inside the sandbox root.
func checkSymlink(name, target string) error {
	if target == "" {
		return unsafeEntry(name, "empty symlink target")
	}
	if strings.HasPrefix(target, "/") {
		return nil
	}
	depth := strings.Count(name, "/") // directories above the link
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return unsafeEntry(name, fmt.Sprintf("symlink target %q points outside the tree", target))
			}
		default:
			depth++
		}
	}
	return nil
}
