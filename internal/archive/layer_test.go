package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// layerTar builds an uncompressed tar of hdrs; a regular file's body is
// bodies[name] (its Size is set from it).
func layerTar(t *testing.T, hdrs []tar.Header, bodies map[string]string) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(bodies[h.Name]))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(bodies[h.Name])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("layer extraction makes whiteout devices and trusted xattrs: needs root")
	}
}

func TestExtractLayerWhiteouts(t *testing.T) {
	needRoot(t)
	dst := filepath.Join(t.TempDir(), "layer")
	r := layerTar(t, []tar.Header{
		{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "etc/.wh.motd", Typeflag: tar.TypeReg},
		{Name: "etc/hostname", Typeflag: tar.TypeReg},
		{Name: "opt/app/.wh..wh..opq", Typeflag: tar.TypeReg},
		{Name: "opt/app/new", Typeflag: tar.TypeReg},
		{Name: "bin/su", Typeflag: tar.TypeReg, Mode: 0o4755},
		{Name: "var/mail/", Typeflag: tar.TypeDir, Mode: 0o2775},
	}, map[string]string{"etc/hostname": "box\n", "opt/app/new": "n"})
	st, err := ExtractLayer(context.Background(), r, dst, LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Whiteouts != 1 || st.Opaque != 1 || st.SetuidDropped != 1 {
		t.Errorf("stats %+v, want 1 whiteout, 1 opaque, 1 setuid dropped", st)
	}
	var s unix.Stat_t
	if err := unix.Lstat(filepath.Join(dst, "etc/motd"), &s); err != nil {
		t.Fatalf("whiteout etc/motd: %v", err)
	}
	if s.Mode&unix.S_IFMT != unix.S_IFCHR || s.Rdev != 0 {
		t.Errorf("etc/motd mode %o rdev %d, want a 0/0 character device", s.Mode, s.Rdev)
	}
	if _, err := os.Lstat(filepath.Join(dst, "etc/.wh.motd")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the .wh. entry itself was written: %v", err)
	}
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(filepath.Join(dst, "opt/app"), "trusted.overlay.opaque", buf)
	if err != nil || string(buf[:n]) != "y" {
		t.Errorf("opt/app opaque xattr = %q, %v; want y", buf[:n], err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "opt/app/.wh..wh..opq")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the opaque marker file was written: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "bin/su")); err != nil || fi.Mode()&os.ModeSetuid != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/su: %v %v, want 0755 without setuid", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "var/mail")); err != nil || fi.Mode()&os.ModeSetgid == 0 {
		t.Errorf("var/mail lost its setgid bit: %v %v", fi.Mode(), err)
	}

	keep := filepath.Join(t.TempDir(), "keep")
	r = layerTar(t, []tar.Header{{Name: "bin/su", Typeflag: tar.TypeReg, Mode: 0o4755}}, nil)
	if _, err := ExtractLayer(context.Background(), r, keep, LayerOptions{KeepSetuid: true}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(keep, "bin/su")); fi.Mode()&os.ModeSetuid == 0 {
		t.Errorf("KeepSetuid: bin/su is %v", fi.Mode())
	}
}

func TestExtractLayerRefusesUnsafe(t *testing.T) {
	needRoot(t)
	outside := t.TempDir()
	cases := []struct {
		name string
		hdrs []tar.Header
	}{
		{"absolute", []tar.Header{{Name: "/etc/passwd", Typeflag: tar.TypeReg}}},
		{"traversal", []tar.Header{{Name: "a/../../escape", Typeflag: tar.TypeReg}}},
		{"symlink escape", []tar.Header{{Name: "a/up", Typeflag: tar.TypeSymlink, Linkname: "../../.."}}},
		{"through symlink", []tar.Header{
			{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/"},
			{Name: "link/tmp/escape", Typeflag: tar.TypeReg},
		}},
		{"through absolute symlink", []tar.Header{
			{Name: "out", Typeflag: tar.TypeSymlink, Linkname: outside},
			{Name: "out/escape", Typeflag: tar.TypeReg},
		}},
		{"hard link out", []tar.Header{{Name: "pw", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}}},
		{"device", []tar.Header{{Name: "dev/sda", Typeflag: tar.TypeBlock, Devmajor: 8}}},
		{"whiteout of dotdot", []tar.Header{{Name: "a/.wh...", Typeflag: tar.TypeReg}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "layer")
			_, err := ExtractLayer(context.Background(), layerTar(t, c.hdrs, nil), dst, LayerOptions{})
			if !errors.Is(err, ErrUnsafeEntry) {
				t.Fatalf("err = %v, want ErrUnsafeEntry", err)
			}
		})
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Errorf("something was written outside: %v", names)
	}

	dst := filepath.Join(t.TempDir(), "layer")
	st, err := ExtractLayer(context.Background(), layerTar(t, []tar.Header{
		{Name: "dev/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3},
		{Name: "ok", Typeflag: tar.TypeReg},
	}, nil), dst, LayerOptions{SkipDevices: true})
	if err != nil || st.DevicesSkipped != 1 {
		t.Fatalf("SkipDevices: %+v %v", st, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "dev/null")); err == nil {
		t.Error("SkipDevices created the device")
	}
}

// TestExtractLayerPlainRefusesSymlinks: an OCI layout's tar (Plain) may
// not hold a symbolic link, even one that stays inside: its files are read
// on the host by a reader that follows links. Plain regular files and
// ".wh." names pass as ordinary files.
func TestExtractLayerPlainRefusesSymlinks(t *testing.T) {
	needRoot(t)
	for _, hdrs := range [][]tar.Header{
		{{Name: "index.json", Typeflag: tar.TypeSymlink, Linkname: "/dev/zero"}},
		{{Name: "blobs", Typeflag: tar.TypeSymlink, Linkname: "/"}},
		{{Name: "oci-layout", Typeflag: tar.TypeReg}, {Name: "index.json", Typeflag: tar.TypeSymlink, Linkname: "oci-layout"}},
	} {
		dst := filepath.Join(t.TempDir(), "layout")
		_, err := ExtractLayer(context.Background(), layerTar(t, hdrs, nil), dst, LayerOptions{Plain: true})
		if !errors.Is(err, ErrUnsafeEntry) {
			t.Errorf("Plain with %s -> %s: %v, want ErrUnsafeEntry", hdrs[len(hdrs)-1].Name, hdrs[len(hdrs)-1].Linkname, err)
		}
	}
	dst := filepath.Join(t.TempDir(), "layout")
	if _, err := ExtractLayer(context.Background(), layerTar(t, []tar.Header{
		{Name: "index.json", Typeflag: tar.TypeReg}, {Name: "blobs/sha256/.wh.x", Typeflag: tar.TypeReg},
	}, map[string]string{"index.json": "{}"}), dst, LayerOptions{Plain: true}); err != nil {
		t.Fatalf("a plain layout: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "blobs/sha256/.wh.x")); err != nil {
		t.Errorf("Plain: the .wh. name as an ordinary file: %v", err)
	}
}

func TestExtractLayerTruncated(t *testing.T) {
	needRoot(t)
	r := layerTar(t, []tar.Header{{Name: "big", Typeflag: tar.TypeReg}}, map[string]string{"big": strings.Repeat("x", 10000)})
	b := make([]byte, r.Len()/3)
	_, _ = r.Read(b)
	_, err := ExtractLayer(context.Background(), bytes.NewReader(b), filepath.Join(t.TempDir(), "l"), LayerOptions{})
	if err == nil {
		t.Fatal("a truncated layer extracted without error")
	}
}
