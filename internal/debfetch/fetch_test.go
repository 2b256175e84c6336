package debfetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// buildDeb builds a package holding usr/bin/hello with content and returns
// its bytes.
func buildDeb(t *testing.T, content string) []byte {
	t.Helper()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("needs dpkg-deb to build a test package")
	}
	root := filepath.Join(t.TempDir(), "pkg")
	for _, d := range []string{"DEBIAN", "usr/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	control := "Package: hello\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.test>\nDescription: test\n"
	if err := os.WriteFile(filepath.Join(root, "DEBIAN/control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/bin/hello"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(t.TempDir(), "hello.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v: %s", err, out)
	}
	b, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestInstall(t *testing.T) {
	const content = "#!/bin/sh\necho hello\n"
	deb := buildDeb(t, content)
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hello.deb" {
			http.NotFound(w, r)
			return
		}
		gets.Add(1)
		w.Write(deb)
	}))
	defer srv.Close()
	pkg := Package{Name: "hello", Version: "1.0", URLs: []string{srv.URL + "/gone.deb", srv.URL + "/hello.deb"},
		SHA256: hexSum(deb), Files: map[string]string{"usr/bin/hello": hexSum([]byte(content))}}
	ctx := context.Background()

	tests := []struct {
		name     string
		pkg      func(Package) Package
		wantGets int32
		check    func(t *testing.T, paths map[string]string, err error)
	}{
		{name: "fetches, skipping a URL that fails", pkg: func(p Package) Package { return p }, wantGets: 1,
			check: func(t *testing.T, paths map[string]string, err error) {
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(paths["hello"])
				if err != nil || string(b) != content {
					t.Fatalf("cached hello = %q, %v; want the package's file", b, err)
				}
				if st, _ := os.Stat(paths["hello"]); st.Mode().Perm()&0o100 == 0 {
					t.Errorf("cached hello has mode %v, want executable", st.Mode())
				}
			}},
		{name: "second install is served from the cache", pkg: func(p Package) Package { return p }, wantGets: 0,
			check: func(t *testing.T, _ map[string]string, err error) {
				if err != nil {
					t.Fatal(err)
				}
			}},
		{name: "wrong package pin", pkg: func(p Package) Package { p.Version = "2.0"; p.SHA256 = hexSum(nil); return p }, wantGets: 1,
			check: func(t *testing.T, _ map[string]string, err error) {
				var ce *ChecksumError
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a ChecksumError", err)
				}
			}},
		{name: "wrong file pin", pkg: func(p Package) Package {
			p.Version = "3.0"
			p.Files = map[string]string{"usr/bin/hello": hexSum([]byte("other"))}
			return p
		}, wantGets: 1,
			check: func(t *testing.T, paths map[string]string, err error) {
				var ce *ChecksumError
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a ChecksumError", err)
				}
			}},
		{name: "no URL serves it", pkg: func(p Package) Package { p.Version = "4.0"; p.URLs = p.URLs[:1]; return p }, wantGets: 0,
			check: func(t *testing.T, _ map[string]string, err error) {
				var ue *UnavailableError
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want an UnavailableError", err)
				}
			}},
	}
	root := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := gets.Load()
			paths, err := tc.pkg(pkg).Install(ctx, root)
			tc.check(t, paths, err)
			if got := gets.Load() - before; got != tc.wantGets {
				t.Errorf("downloads = %d, want %d", got, tc.wantGets)
			}
		})
	}
}
