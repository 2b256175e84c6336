package archive

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// TreeOptions tune CaptureTree.
type TreeOptions struct {
	// Cache is the StatCache of the previous capture or extraction of the
	// same directory; files it vouches for are not read again. May be nil.
	Cache *StatCache
	// WrapFile, when set, wraps the writer of every blob file written. It
	// exists for fault injection (a writer failing with ENOSPC).
	WrapFile func(io.Writer) io.Writer
	// Workers bounds the files read and written in parallel; default
	// GOMAXPROCS + 1.
	Workers int
}

// inlineMax is the largest file read whole into memory (hashed before any
// blob is written, so known content costs no write); larger files stream
// into a temporary blob while they are hashed.
const inlineMax = 4 << 20

// packMax is the largest content put into a pack; packCap the size at
// which a pack is written out and a new one started.
const (
	packMax = 256 << 10
	packCap = 32 << 20
)

// fileJob is one regular file whose content must be read.
type fileJob struct {
	idx  int // into the entry list
	path string
	rel  string
	id   fileID
}

// treeCapture holds the state of one CaptureTree.
type treeCapture struct {
	blobDir string
	opt     TreeOptions
	cache   *StatCache // the new one

	mu      sync.Mutex
	claimed map[string]bool      // content digests being or already written by this capture
	small   map[int][]byte       // small contents by entry index, until packed
	packed  map[string]placement // small contents of this capture → their place in a pack
	pack    []byte               // the pack being filled (index len(packs))
	packs   []string             // hex digests of the packs written
	tmps    []pendingBlob        // temporary blobs to publish
	written int64
}

// placement is where readFile put a content: its own blob (pack < 0) or
// pack number pack of this capture at off.
type placement struct {
	pack int
	off  int64
}

type pendingBlob struct{ tmp, final string }

// CaptureTree archives srcDir as a tree artifact (FormatTree) in blobDir:
// content (or pack) blobs for every file content not stored yet, then the
// manifest. Everything it wrote is durable (each file fsynced, then
// renamed, then the directories fsynced) before it returns. It also
// returns the StatCache of what it saw, for the next capture of the same
// directory, which must be quiescent while it runs. On error no temporary
// file is left behind; content blobs already published are left for the
// caller's garbage collection.
func CaptureTree(ctx context.Context, srcDir, blobDir string, opt TreeOptions) (Ref, *StatCache, error) {
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0) + 1
	}
	if err := os.MkdirAll(filepath.Join(blobDir, dataDir), 0o700); err != nil {
		return Ref{}, nil, fmt.Errorf("creating blob dir: %w", err)
	}
	c := &treeCapture{blobDir: blobDir, opt: opt, cache: NewStatCache(), claimed: map[string]bool{}, small: map[int][]byte{}, packed: map[string]placement{}}
	seal := time.Now() // the tree is quiescent from here on
	entries, jobs, ref, err := c.walk(ctx, srcDir)
	if err == nil {
		err = c.readAll(ctx, entries, jobs)
	}
	var manifest pendingBlob
	if err == nil {
		manifest, ref.Size, err = c.writeManifest(entries)
		if err == nil {
			ref.Digest = DigestPrefix + filepath.Base(manifest.final)[:64]
		}
	}
	if err == nil {
		err = c.publish(manifest)
	}
	if err != nil {
		c.removeTemps(manifest)
		return Ref{}, nil, err
	}
	c.cache.Seal(seal)
	ref.Format = FormatTree
	ref.Written = c.written + ref.Size
	return ref, c.cache, nil
}

// walk lists srcDir in lexical order. Files the old cache vouches for (and
// whose blob still exists) get their digest; the others become jobs.
func (c *treeCapture) walk(ctx context.Context, srcDir string) ([]entry, []fileJob, Ref, error) {
	var (
		ref     Ref
		entries []entry
		jobs    []fileJob
		links   = map[inode]string{}
	)
	err := filepath.WalkDir(srcDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walking %s: %w", path, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(srcDir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		e := entry{Name: rel, Mode: int64(st.Mode & 0o7777), UID: int(st.Uid), GID: int(st.Gid), MTime: st.Mtim.Nano()}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			e.Type = typeDir
		case unix.S_IFREG:
			if st.Nlink > 1 {
				key := inode{uint64(st.Dev), st.Ino}
				if first, ok := links[key]; ok {
					e.Type, e.Link = typeLink, first
					break
				}
				links[key] = rel
			}
			e.Type, e.Size = typeReg, st.Size
			ref.Bytes += st.Size
			if st.Size == 0 {
				break
			}
			id := fileIDOf(&st)
			if h, loc, ok := c.opt.Cache.lookup(rel, id); ok && c.exists(cmp.Or(loc.pack, h)) {
				e.Digest, e.Pack, e.Off = h, loc.pack, loc.off
				c.cache.put(rel, id, h, loc)
				break
			}
			jobs = append(jobs, fileJob{idx: len(entries), path: path, rel: rel, id: id})
		case unix.S_IFLNK:
			target, err := os.Readlink(path)
			if err != nil {
				return fmt.Errorf("reading link %s: %w", path, err)
			}
			e.Type, e.Link = typeSymlink, target
		case unix.S_IFIFO:
			e.Type = typeFifo
		case unix.S_IFSOCK:
			return nil
		case unix.S_IFCHR:
			if st.Rdev != 0 {
				return fmt.Errorf("%w: %s (character device)", ErrUnsupported, path)
			}
			e.Type, e.Mode = typeWhiteout, 0
		default:
			return fmt.Errorf("%w: %s (mode %#o)", ErrUnsupported, path, st.Mode&unix.S_IFMT)
		}
		x, err := xattrsOf(path)
		if err != nil {
			return err
		}
		e.Xattrs = x
		entries = append(entries, e)
		ref.Files++
		return nil
	})
	return entries, jobs, ref, err
}

// exists reports whether the content blob with hex digest h is stored.
func (c *treeCapture) exists(h string) bool {
	_, err := os.Lstat(contentPath(c.blobDir, h))
	return err == nil
}

// readAll hashes (and stores, when new) the jobs' files on Workers goroutines.
func (c *treeCapture) readAll(ctx context.Context, entries []entry, jobs []fileJob) error {
	if len(jobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan fileJob)
	places := make([]placement, len(entries)) // written at distinct indexes
	var (
		wg    sync.WaitGroup
		emu   sync.Mutex
		first error
	)
	for range min(c.opt.Workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for j := range ch {
				h, pl, err := c.readFile(j, buf)
				if err != nil {
					emu.Lock()
					if first == nil {
						first = err
					}
					emu.Unlock()
					cancel()
					continue
				}
				entries[j.idx].Digest = h // distinct index per job
				places[j.idx] = pl
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if first != nil {
		return first
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.packSmall(jobs, entries, places); err != nil {
		return err
	}
	for _, j := range jobs {
		e, loc := &entries[j.idx], blobLoc{}
		if pl := places[j.idx]; pl.pack >= 0 {
			loc = blobLoc{pack: c.packs[pl.pack], off: pl.off}
			e.Pack, e.Off = loc.pack, loc.off
		}
		c.cache.put(j.rel, j.id, e.Digest, loc)
	}
	return nil
}

// pendingSmall is placement.pack of a small content readFile kept in
// memory; packSmall packs these in entry order, so that the same tree
// always yields the same packs and manifest.
const pendingSmall = -2

// keepSmall holds a copy of a small content new to the blob store until
// packSmall places it.
func (c *treeCapture) keepSmall(idx int, data []byte) placement {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.small[idx] = append([]byte(nil), data...)
	return placement{pack: pendingSmall}
}

// packSmall places the kept small contents into packs, in entry order,
// each distinct content once.
func (c *treeCapture) packSmall(jobs []fileJob, entries []entry, places []placement) error {
	for _, j := range jobs {
		if places[j.idx].pack != pendingSmall {
			continue
		}
		h := entries[j.idx].Digest
		pl, ok := c.packed[h]
		if !ok {
			pl = placement{pack: len(c.packs), off: int64(len(c.pack))}
			c.pack = append(c.pack, c.small[j.idx]...)
			c.packed[h] = pl
			if len(c.pack) >= packCap {
				if err := c.flushPack(); err != nil {
					return err
				}
			}
		}
		places[j.idx] = pl
		delete(c.small, j.idx)
	}
	return c.flushPack()
}

// flushPack writes the current pack as a blob.
func (c *treeCapture) flushPack() error {
	if len(c.pack) == 0 {
		return nil
	}
	data := c.pack
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	c.packs = append(c.packs, h)
	c.pack = nil
	if c.exists(h) {
		return nil
	}
	return c.writeBlob(h, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// readFile hashes one file and stores its content unless already stored:
// small contents go into a pack, others into their own blob.
func (c *treeCapture) readFile(j fileJob, buf []byte) (string, placement, error) {
	own := placement{pack: -1}
	f, err := os.OpenFile(j.path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", own, fmt.Errorf("opening %s: %w", j.path, err)
	}
	defer f.Close()
	if j.id.Size <= inlineMax {
		data := buf
		if int64(len(data)) < j.id.Size {
			data = make([]byte, j.id.Size)
		}
		data = data[:j.id.Size]
		if n, err := io.ReadFull(f, data); err != nil {
			return "", own, fmt.Errorf("archiving %s: file shrank from %d to %d bytes while capturing: %w", j.path, j.id.Size, n, err)
		}
		sum := sha256.Sum256(data)
		h := hex.EncodeToString(sum[:])
		if j.id.Size <= packMax && !c.exists(h) {
			return h, c.keepSmall(j.idx, data), nil
		}
		if !c.claim(h) {
			return h, own, nil
		}
		return h, own, c.writeBlob(h, func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	// Large: stream into a temporary blob while hashing.
	tmp, err := os.CreateTemp(filepath.Join(c.blobDir, dataDir), tempPrefix+"*")
	if err != nil {
		return "", own, fmt.Errorf("creating temporary blob: %w", err)
	}
	hs := sha256.New()
	var w io.Writer = &writebackWriter{f: tmp}
	if c.opt.WrapFile != nil {
		w = c.opt.WrapFile(w)
	}
	n, err := io.CopyBuffer(io.MultiWriter(w, hs), io.LimitReader(f, j.id.Size), buf)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != j.id.Size {
		err = fmt.Errorf("file shrank from %d to %d bytes while capturing", j.id.Size, n)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", own, fmt.Errorf("archiving %s: %w", j.path, err)
	}
	h := hex.EncodeToString(hs.Sum(nil))
	if !c.claim(h) {
		os.Remove(tmp.Name())
		return h, own, nil
	}
	c.addPending(tmp.Name(), h, n)
	return h, own, nil
}

// claim reports whether this capture must store content h: it is neither
// stored yet nor being stored by another worker.
func (c *treeCapture) claim(h string) bool {
	c.mu.Lock()
	if c.claimed[h] {
		c.mu.Unlock()
		return false
	}
	c.claimed[h] = true
	c.mu.Unlock()
	return !c.exists(h)
}

func (c *treeCapture) addPending(tmp, h string, n int64) {
	c.mu.Lock()
	c.tmps = append(c.tmps, pendingBlob{tmp, contentPath(c.blobDir, h)})
	c.written += n
	c.mu.Unlock()
}

// writeBlob writes content h into a temporary blob to be published.
func (c *treeCapture) writeBlob(h string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Join(c.blobDir, dataDir), tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("creating temporary blob: %w", err)
	}
	cw := &countWriter{w: tmp}
	var w io.Writer = cw
	if c.opt.WrapFile != nil {
		w = c.opt.WrapFile(w)
	}
	err = fill(w)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing blob %s: %w", h, err)
	}
	c.addPending(tmp.Name(), h, cw.n)
	return nil
}

// writeManifest writes the manifest into a temporary blob.
func (c *treeCapture) writeManifest(entries []entry) (pendingBlob, int64, error) {
	tmp, err := os.CreateTemp(c.blobDir, tempPrefix+"*")
	if err != nil {
		return pendingBlob{}, 0, fmt.Errorf("creating temporary manifest: %w", err)
	}
	p := pendingBlob{tmp: tmp.Name()}
	hs := sha256.New()
	var fw io.Writer = tmp
	if c.opt.WrapFile != nil {
		fw = c.opt.WrapFile(fw)
	}
	cw := &countWriter{w: io.MultiWriter(fw, hs)}
	err = encodeManifest(cw, entries)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return p, 0, fmt.Errorf("writing manifest: %w", err)
	}
	p.final = filepath.Join(c.blobDir, hex.EncodeToString(hs.Sum(nil))+manifestSuffix)
	return p, cw.n, nil
}

// publish gives every temporary blob, each already fsynced by its writer
// (on the worker that wrote it, so the waits overlap), its final name,
// then makes the names durable. Only the capture's own files are flushed,
// not the whole file system with the sandbox's dirty pages.
func (c *treeCapture) publish(manifest pendingBlob) error {
	all := append(c.tmps, manifest)
	for _, p := range all {
		if err := os.Rename(p.tmp, p.final); err != nil {
			return fmt.Errorf("publishing blob: %w", err)
		}
	}
	c.tmps = nil
	if len(all) > 1 {
		if err := syncDir(filepath.Join(c.blobDir, dataDir)); err != nil {
			return err
		}
	}
	return syncDir(c.blobDir)
}

func (c *treeCapture) removeTemps(manifest pendingBlob) {
	for _, p := range append(c.tmps, manifest) {
		if p.tmp != "" {
			os.Remove(p.tmp)
		}
	}
}

// tempPrefix starts the name of every temporary blob.
const tempPrefix = ".capture-"

// RemoveTemps deletes the temporary blobs a crashed capture left in blobDir.
func RemoveTemps(blobDir string) error {
	for _, dir := range []string{blobDir, filepath.Join(blobDir, dataDir)} {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", dir, err)
		}
		for _, e := range ents {
			if len(e.Name()) >= len(tempPrefix) && e.Name()[:len(tempPrefix)] == tempPrefix {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("removing %s: %w", e.Name(), err)
				}
			}
		}
	}
	return nil
}
