package archive

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ExtractOptions tune ExtractTreeWith.
type ExtractOptions struct {
	// Reuse is a directory Park filled from the tree this ref was captured
	// from ("" or missing: none). A parked file whose content still hashes
	// to the manifest's digest is linked into place instead of a new file
	// being created and filled (on file systems where creating inodes is
	// slow, that is most of an extraction). The caller removes Reuse
	// after a successful extraction.
	Reuse string
}

// ExtractStats says how an extraction went.
type ExtractStats struct {
	Files  int // regular files with content
	Reused int // of which taken over from ExtractOptions.Reuse
}

// ExtractTree verifies the manifest named by ref (a FormatTree artifact in
// blobDir) and recreates the tree in dstDir, which must be missing or
// empty, under the same rules as ExtractRef. Every file's content is checked
// against its digest as it is copied from its blob; files are filled on
// several goroutines. It returns the StatCache of the files it wrote;
// Seal it with the time before anything may modify dstDir. On error dstDir
// may hold a partial tree: the caller deletes it before retrying.
func ExtractTree(ctx context.Context, blobDir string, ref Ref, dstDir string) (*StatCache, error) {
	c, _, err := ExtractTreeWith(ctx, blobDir, ref, dstDir, ExtractOptions{})
	return c, err
}

// ExtractTreeWith is ExtractTree with options; it also returns statistics.
func ExtractTreeWith(ctx context.Context, blobDir string, ref Ref, dstDir string, opt ExtractOptions) (*StatCache, ExtractStats, error) {
	c, st, err := extractTree(ctx, blobDir, ref, dstDir, opt)
	if err != nil {
		return nil, ExtractStats{}, err
	}
	return c, st, nil
}

func extractTree(ctx context.Context, blobDir string, ref Ref, dstDir string, opt ExtractOptions) (*StatCache, ExtractStats, error) {
	var stats ExtractStats
	if ref.Format != FormatTree {
		return nil, stats, fmt.Errorf("%w: %s is not a tree artifact", ErrBadDigest, ref.Digest)
	}
	want, err := ParseDigest(ref.Digest)
	if err != nil {
		return nil, stats, err
	}
	p, _ := RefPath(blobDir, ref)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, stats, fmt.Errorf("blob %s: %w", ref.Digest, err)
	}
	if int64(len(data)) != ref.Size {
		return nil, stats, fmt.Errorf("%w: manifest %s has %d bytes, recorded %d", ErrDigestMismatch, ref.Digest, len(data), ref.Size)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
		return nil, stats, fmt.Errorf("%w: manifest %s is sha256:%x", ErrDigestMismatch, ref.Digest, sum)
	}
	if err := prepareDst(dstDir); err != nil {
		return nil, stats, err
	}
	x, err := newExtractor(dstDir)
	if err != nil {
		return nil, stats, err
	}
	defer x.close()
	f := newFiller(ctx, blobDir, runtime.GOMAXPROCS(0)+1, opt.Reuse)
	defer f.closeReuse()
	x.filler = f
	files := 0
	err = decodeManifest(bytes.NewReader(data), func(e *entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := e.header()
		if err != nil {
			return err
		}
		x.digest, x.loc = e.Digest, blobLoc{pack: e.Pack, off: e.Off}
		if err := x.entry(hdr, eofReader{}); err != nil {
			return err
		}
		files++
		return f.error()
	})
	if ferr := f.wait(); err == nil {
		err = ferr
	}
	for _, d := range x.deferred {
		if err != nil {
			break
		}
		err = d()
	}
	if err != nil {
		return nil, stats, err
	}
	if err := x.finish(); err != nil {
		return nil, stats, err
	}
	if files != ref.Files {
		return nil, stats, fmt.Errorf("%w: manifest %s lists %d entries, recorded %d", ErrDigestMismatch, ref.Digest, files, ref.Files)
	}
	stats.Files, stats.Reused = int(f.files.Load()), int(f.reused.Load())
	return f.cache, stats, nil
}

// eofReader is the (empty) body of a tree entry: contents come from blobs.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// fillJob is a file to create in a checked directory and fill from a
// content blob.
type fillJob struct {
	dirfd    int // a descriptor of the parent directory, owned by the job
	base     string
	name     string
	digest   string
	loc      blobLoc // where the content is stored
	size     int64
	uid, gid int
	mode     uint32
	mtime    time.Time
}

// filler copies content blobs into extracted files on several goroutines.
type filler struct {
	blobDir string
	ch      chan fillJob
	wg      sync.WaitGroup
	cache   *StatCache
	chown   bool
	uid     int
	gid     int
	ctx     context.Context
	reuse   int // descriptor of ExtractOptions.Reuse; -1: none
	files   atomic.Int64
	reused  atomic.Int64

	mu  sync.Mutex
	err error
}

func (f *filler) closeReuse() {
	if f.reuse >= 0 {
		unix.Close(f.reuse)
	}
}

func newFiller(ctx context.Context, blobDir string, workers int, reuse string) *filler {
	f := &filler{
		blobDir: blobDir, ch: make(chan fillJob, 256), cache: NewStatCache(),
		chown: os.Geteuid() == 0, uid: os.Geteuid(), gid: os.Getegid(), ctx: ctx, reuse: -1,
	}
	if reuse != "" {
		if fd, err := unix.Open(reuse, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			f.reuse = fd
		}
	}
	for range workers {
		f.wg.Add(1)
		go f.run()
	}
	return f
}

func (f *filler) run() {
	defer f.wg.Done()
	buf := make([]byte, 1<<20)
	for j := range f.ch {
		if f.error() == nil && f.ctx.Err() == nil {
			if err := f.fill(j, buf); err != nil {
				f.setError(err)
			}
		}
		unix.Close(j.dirfd)
	}
}

func (f *filler) error() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *filler) setError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// wait stops the workers and returns the first error.
func (f *filler) wait() error {
	close(f.ch)
	f.wg.Wait()
	if err := f.error(); err != nil {
		return err
	}
	return f.ctx.Err()
}

func (f *filler) fill(j fillJob, buf []byte) error {
	f.files.Add(1)
	if f.reuse >= 0 {
		dst, err := f.adopt(j, buf)
		if err != nil {
			return err
		}
		if dst != nil {
			defer dst.Close()
			f.reused.Add(1)
			return f.finishFile(j, int(dst.Fd()), true)
		}
	}
	src, err := os.Open(contentPath(f.blobDir, cmp.Or(j.loc.pack, j.digest)))
	if err != nil {
		return fmt.Errorf("content of %s: %w", j.name, err)
	}
	defer src.Close()
	var r io.Reader = io.LimitReader(src, j.size+1) // a longer blob fails the size check
	if j.loc.pack != "" {
		r = io.NewSectionReader(src, j.loc.off, j.size)
	}
	fd, err := unix.Openat(j.dirfd, j.base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", j.name, err)
	}
	dst := os.NewFile(uintptr(fd), j.name)
	defer dst.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(dst, h), r, buf)
	if err != nil {
		return fmt.Errorf("writing %s: %w", j.name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != j.size || got != j.digest {
		return fmt.Errorf("%w: content of %s is %d bytes sha256:%s, want %d bytes sha256:%s", ErrDigestMismatch, j.name, n, got, j.size, j.digest)
	}
	return f.finishFile(j, fd, false)
}

// finishFile sets the owner, mode and mtime of a filled (or adopted) file
// and records its identity in the cache.
func (f *filler) finishFile(j fillJob, fd int, adopted bool) error {
	if f.chown && (adopted || j.uid != f.uid || j.gid != f.gid) {
		if err := unix.Fchown(fd, j.uid, j.gid); err != nil {
			return fmt.Errorf("chown %s: %w", j.name, err)
		}
	}
	if err := unix.Fchmod(fd, j.mode); err != nil {
		return fmt.Errorf("chmod %s: %w", j.name, err)
	}
	if err := futimens(fd, j.mtime); err != nil {
		return fmt.Errorf("setting mtime of %s: %w", j.name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", j.name, err)
	}
	f.cache.put(j.name, fileIDOf(&st), j.digest, j.loc)
	return nil
}

// futimens sets the mtime of an open file (utimensat with a NULL path),
// keeping nanoseconds, which unix.Futimes would drop.
func futimens(fd int, mtime time.Time) error {
	ts := [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtime.UnixNano())}
	_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// createForFill queues name, in the checked directory pfd, to be created
// and filled from its content blob by the filler's workers.
func (x *extractor) createForFill(pfd int, base, name string, mode uint32, j fillJob) error {
	dfd, err := unix.FcntlInt(uintptr(pfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	j.dirfd, j.base, j.name, j.mode = dfd, base, name, mode
	select {
	case x.filler.ch <- j:
		return nil
	case <-x.filler.ctx.Done():
		unix.Close(dfd)
		return x.filler.ctx.Err()
	}
}
