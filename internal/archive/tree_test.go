package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// settle waits until files written so far are older than the stat cache's
// seal margin, so that a capture's cache vouches for them.
func settle() { time.Sleep(2 * sealMargin) }

func TestTreeRoundTrip(t *testing.T) {
	ctx := context.Background()
	src, blobs, dst := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "out")
	buildTree(t, src)
	want := snapshot(t, src)
	settle()
	ref, cache, err := CaptureTree(ctx, src, blobs, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Format != FormatTree || ref.Files != len(want) || ref.Bytes < 20<<20 {
		t.Errorf("ref = %+v, want format %q, %d files, ≥ 20 MiB", ref, FormatTree, len(want))
	}
	if ref.Written < 20<<20 {
		t.Errorf("first capture wrote %d bytes, want ≥ 20 MiB", ref.Written)
	}
	if cache.Len() == 0 {
		t.Fatal("capture returned an empty stat cache")
	}
	// The four small contents share one pack; the 20 MiB file has its own blob.
	if cs, _ := ListContent(blobs); len(cs) != 2 {
		t.Errorf("%d content blobs, want 2 (a pack and the big file)", len(cs))
	}
	got, err := ExtractTree(ctx, blobs, ref, dst)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, dst)
	compareTrees(t, want, snap)
	if snap["a.txt"].ino != snap["hard.txt"].ino {
		t.Errorf("hard link not preserved: inodes %d and %d", snap["a.txt"].ino, snap["hard.txt"].ino)
	}
	if got.Len() == 0 {
		t.Error("extraction returned an empty stat cache")
	}
	// Recapture: same digest with or without the cache; with it nothing
	// but the (identical) manifest is written.
	for _, tc := range []struct {
		name  string
		cache *StatCache
	}{{"no cache", nil}, {"cache", cache}} {
		t.Run(tc.name, func(t *testing.T) {
			ref2, _, err := CaptureTree(ctx, src, blobs, TreeOptions{Cache: tc.cache})
			if err != nil {
				t.Fatal(err)
			}
			if ref2.Digest != ref.Digest || ref2.Files != ref.Files || ref2.Bytes != ref.Bytes {
				t.Errorf("recapture %+v, want %+v", ref2, ref)
			}
			if ref2.Written != ref2.Size {
				t.Errorf("recapture wrote %d bytes, want only the %d-byte manifest", ref2.Written, ref2.Size)
			}
		})
	}
	// The legacy entry point extracts tree refs too.
	if err := ExtractRef(ctx, blobs, ref, filepath.Join(t.TempDir(), "x")); err != nil {
		t.Errorf("ExtractRef of a tree: %v", err)
	}
}

func TestTreeIncremental(t *testing.T) {
	ctx := context.Background()
	old := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name   string
		change func(t *testing.T, p string)
		want   []byte
	}{
		{"unchanged", func(*testing.T, string) {}, []byte("AAAA-original")},
		{"same size, mtime restored", func(t *testing.T, p string) {
			mustWrite(t, p, []byte("BBBB-original"), 0o644)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}, []byte("BBBB-original")},
		{"replaced by rename, same size and mtime", func(t *testing.T, p string) {
			mustWrite(t, p+".new", []byte("CCCC-original"), 0o644)
			os.Chtimes(p+".new", old, old)
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}, []byte("CCCC-original")},
		{"appended", func(t *testing.T, p string) {
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte("+"))
			f.Close()
		}, []byte("AAAA-original+")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, blobs := t.TempDir(), t.TempDir()
			p := filepath.Join(src, "d/f")
			mustWrite(t, p, []byte("AAAA-original"), 0o644)
			os.Chtimes(p, old, old)
			mustWrite(t, filepath.Join(src, "other"), randBytes(9, 1<<20), 0o644)
			settle()
			_, cache, err := CaptureTree(ctx, src, blobs, TreeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if cache.Len() != 2 {
				t.Fatalf("cache holds %d files, want 2", cache.Len())
			}
			tc.change(t, p)
			ref, _, err := CaptureTree(ctx, src, blobs, TreeOptions{Cache: cache})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Written >= 1<<20 {
				t.Errorf("unchanged 1 MiB file written again (%d bytes written)", ref.Written)
			}
			dst := filepath.Join(t.TempDir(), "out")
			if _, err := ExtractTree(ctx, blobs, ref, dst); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(dst, "d/f")); !bytes.Equal(got, tc.want) {
				t.Errorf("extracted %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatCacheSeal(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		now  time.Time
		kept bool
	}{
		{"sealed in the same tick", t0.Add(time.Millisecond), false},
		{"sealed just inside the margin", t0.Add(sealMargin - time.Nanosecond), false},
		{"sealed after the margin", t0.Add(sealMargin + time.Millisecond), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewStatCache()
			id := fileID{Ino: 7, Size: 3, MTime: 1, CTime: t0.UnixNano()}
			c.put("f", id, "h", blobLoc{})
			c.Seal(tc.now)
			if _, _, ok := c.lookup("f", id); ok != tc.kept {
				t.Errorf("kept = %v, want %v", ok, tc.kept)
			}
		})
	}
}

// craftTree stores a manifest of the given entries, with content blobs for
// contents (keyed by entry name), and returns its ref.
func craftTree(t *testing.T, blobDir string, entries []entry, contents map[string]string) Ref {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(blobDir, dataDir), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		e := &entries[i]
		if e.Mode == 0 {
			e.Mode = 0o644
		}
		if c, ok := contents[e.Name]; ok {
			sum := sha256.Sum256([]byte(c))
			e.Digest, e.Size = hex.EncodeToString(sum[:]), int64(len(c))
			os.WriteFile(contentPath(blobDir, e.Digest), []byte(c), 0o600)
		}
	}
	var buf bytes.Buffer
	if err := encodeManifest(&buf, entries); err != nil {
		t.Fatal(err)
	}
	sum := sha256Hex(buf.Bytes())
	if err := os.WriteFile(filepath.Join(blobDir, sum+manifestSuffix), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return Ref{Digest: DigestPrefix + sum, Size: int64(buf.Len()), Files: len(entries), Format: FormatTree}
}

func TestExtractTreeRefusesUnsafe(t *testing.T) {
	etcName := "tenon-test-archive-tree-" + strings.ReplaceAll(t.Name(), "/", "_")
	outside := t.TempDir()
	root := entry{Name: ".", Type: typeDir, Mode: 0o755}
	tests := []struct {
		name     string
		entries  []entry
		contents map[string]string
		want     error
		mention  string
	}{
		{"dotdot", []entry{root, {Name: "../x", Type: typeReg}}, map[string]string{"../x": "evil"}, ErrUnsafeEntry, `".."`},
		{"absolute", []entry{root, {Name: "/etc/" + etcName, Type: typeReg}}, map[string]string{"/etc/" + etcName: "evil"}, ErrUnsafeEntry, "absolute path"},
		{"symlink to /etc then file through it", []entry{root,
			{Name: "etc", Type: typeSymlink, Link: "/etc"},
			{Name: "etc/" + etcName, Type: typeReg},
		}, map[string]string{"etc/" + etcName: "evil"}, ErrUnsafeEntry, "passes through symlink"},
		{"symlink to outside dir then file through it", []entry{root,
			{Name: "out", Type: typeSymlink, Link: outside},
			{Name: "out/x", Type: typeReg},
		}, map[string]string{"out/x": "evil"}, ErrUnsafeEntry, "passes through symlink"},
		{"relative symlink escaping", []entry{root, {Name: "d/up", Type: typeSymlink, Link: "../../x"}}, nil, ErrUnsafeEntry, "points outside the tree"},
		{"symlink replaced by later file", []entry{root,
			{Name: "l", Type: typeSymlink, Link: outside + "/victim"},
			{Name: "l", Type: typeReg},
		}, map[string]string{"l": "evil"}, ErrUnsafeEntry, "duplicate entry"},
		{"hardlink to absolute outside", []entry{root, {Name: "h", Type: typeLink, Link: "/etc/passwd"}}, nil, ErrUnsafeEntry, "outside the tree"},
		{"char device", []entry{root, {Name: "null", Type: '3'}}, nil, ErrUnsafeEntry, "device node"},
		{"malformed content digest", []entry{root, {Name: "f", Type: typeReg, Size: 4, Digest: "../../etc/passwd"}}, nil, ErrUnsafeEntry, "bad content digest"},
		{"malformed pack digest", []entry{root, {Name: "f", Type: typeReg, Size: 4,
			Digest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", Pack: "../../etc"}}, nil, ErrUnsafeEntry, "bad pack reference"},
		{"negative pack offset", []entry{root, {Name: "f", Type: typeReg, Size: 4,
			Digest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			Pack:   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", Off: -1}}, nil, ErrUnsafeEntry, "bad pack reference"},
		{"content of another size", []entry{root, {Name: "f", Type: typeReg, Size: 3,
			Digest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}, nil, fs.ErrNotExist, "content of f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blobs := t.TempDir()
			ref := craftTree(t, blobs, tc.entries, tc.contents)
			parent := t.TempDir()
			_, err := ExtractTree(context.Background(), blobs, ref, filepath.Join(parent, "dst"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("err = %q, want it to mention %q", err, tc.mention)
			}
			if _, err := os.Lstat("/etc/" + etcName); err == nil {
				t.Errorf("/etc/%s was written", etcName)
			}
			if e, _ := os.ReadDir(outside); len(e) != 0 {
				t.Errorf("outside dir written: %v", e)
			}
		})
	}
}

func TestExtractTreeCorrupt(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		corrupt func(t *testing.T, blobs string, ref *Ref)
	}{
		{"content blob flipped", func(t *testing.T, blobs string, ref *Ref) {
			ents, _ := os.ReadDir(filepath.Join(blobs, dataDir))
			for _, e := range ents {
				p := filepath.Join(blobs, dataDir, e.Name())
				b, _ := os.ReadFile(p)
				b[len(b)/2] ^= 1
				os.WriteFile(p, b, 0o600)
			}
		}},
		{"content blob truncated", func(t *testing.T, blobs string, ref *Ref) {
			ents, _ := os.ReadDir(filepath.Join(blobs, dataDir))
			for _, e := range ents {
				os.Truncate(filepath.Join(blobs, dataDir, e.Name()), 10)
			}
		}},
		{"manifest flipped", func(t *testing.T, blobs string, ref *Ref) {
			p, _ := RefPath(blobs, *ref)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			os.WriteFile(p, b, 0o600)
		}},
		{"entry count differs", func(t *testing.T, blobs string, ref *Ref) { ref.Files++ }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, blobs := t.TempDir(), t.TempDir()
			mustWrite(t, filepath.Join(src, "f"), randBytes(3, 64<<10), 0o644)
			ref, _, err := CaptureTree(ctx, src, blobs, TreeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tc.corrupt(t, blobs, &ref)
			if _, err := ExtractTree(ctx, blobs, ref, filepath.Join(t.TempDir(), "dst")); !errors.Is(err, ErrDigestMismatch) {
				t.Fatalf("err = %v, want ErrDigestMismatch", err)
			}
		})
	}
}

// TestPackOffsetsChecked points an entry at the wrong place of a pack.
func TestPackOffsetsChecked(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		edit func(e *entry)
	}{
		{"offset of another file", func(e *entry) { e.Off += 5 }},
		{"offset past the end", func(e *entry) { e.Off = 1 << 30 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, blobs := t.TempDir(), t.TempDir()
			mustWrite(t, filepath.Join(src, "a"), []byte("first-file"), 0o644)
			mustWrite(t, filepath.Join(src, "b"), []byte("second-file"), 0o644)
			ref, _, err := CaptureTree(ctx, src, blobs, TreeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p, _ := RefPath(blobs, ref)
			data, _ := os.ReadFile(p)
			var entries []entry
			decodeManifest(bytes.NewReader(data), func(e *entry) error { entries = append(entries, *e); return nil })
			if entries[1].Pack == "" {
				t.Fatalf("small file not packed: %+v", entries[1])
			}
			tc.edit(&entries[1])
			bad := craftTree(t, blobs, entries, nil)
			if _, err := ExtractTree(ctx, blobs, bad, filepath.Join(t.TempDir(), "dst")); !errors.Is(err, ErrDigestMismatch) {
				t.Fatalf("err = %v, want ErrDigestMismatch", err)
			}
		})
	}
}

func TestCaptureTreeFullDisk(t *testing.T) {
	tests := []struct {
		name        string
		files, size int
	}{{"streamed file", 1, 6 << 20}, {"file in memory", 1, 2 << 20}, {"packed files", 100, 20 << 10}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, blobs := t.TempDir(), t.TempDir()
			for i := range tc.files {
				mustWrite(t, filepath.Join(src, fmt.Sprint("f", i)), randBytes(uint64(i), tc.size), 0o644)
			}
			_, _, err := CaptureTree(context.Background(), src, blobs, TreeOptions{
				WrapFile: func(w io.Writer) io.Writer { return &enospcWriter{w: w, limit: 1 << 20} },
			})
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("err = %v, want ENOSPC", err)
			}
			filepath.WalkDir(blobs, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("left behind after ENOSPC: %s", p)
				}
				return nil
			})
		})
	}
}

func TestRemoveTemps(t *testing.T) {
	blobs := t.TempDir()
	mustWrite(t, filepath.Join(blobs, tempPrefix+"1"), []byte("x"), 0o600)
	mustWrite(t, filepath.Join(blobs, dataDir, tempPrefix+"2"), []byte("x"), 0o600)
	mustWrite(t, filepath.Join(blobs, dataDir, "keep"), []byte("x"), 0o600)
	if err := RemoveTemps(blobs); err != nil {
		t.Fatal(err)
	}
	var left []string
	filepath.WalkDir(blobs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, filepath.Base(p))
		}
		return nil
	})
	if len(left) != 1 || left[0] != "keep" {
		t.Errorf("left %v, want [keep]", left)
	}
}
