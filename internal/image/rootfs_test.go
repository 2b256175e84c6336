package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeHost builds a usrmerged host root with a dpkg database of two packages.
func fakeHost(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(p, data string, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	write("usr/bin/dash", "#!dash", 0o755)
	write("usr/lib/libc.so.6", "libc", 0o644)
	write("usr/share/doc/dash/README", "docs", 0o644)
	write("etc/shadow", "root:secret", 0o600)
	write("usr/bin/mawk", "mawk", 0o755)
	link("usr/bin", "bin")
	link("usr/lib", "lib")
	link("dash", "usr/bin/sh")
	link("/etc/alternatives/awk", "usr/bin/awk")
	link("/usr/bin/mawk", "etc/alternatives/awk")
	write("var/lib/dpkg/alternatives/awk", "auto\n/usr/bin/awk\n\n/usr/bin/mawk\n5\n", 0o644)
	write("var/lib/dpkg/status", `Package: dash
Status: install ok installed
Architecture: amd64
Depends: libc6

Package: libc6
Status: install ok installed
Architecture: amd64

Package: mawk
Status: install ok installed
Architecture: amd64
`, 0o644)
	write("var/lib/dpkg/info/dash.list", "/.\n/bin\n/bin/dash\n/bin/sh\n/usr/share/doc/dash/README\n/etc/shadow\n", 0o644)
	write("var/lib/dpkg/info/libc6:amd64.list", "/.\n/lib/libc.so.6\n", 0o644)
	write("var/lib/dpkg/info/mawk.list", "/usr/bin/mawk\n", 0o644)
	return root
}

// planHas reports whether the plan holds name ("usr/bin/python3").
func planHas(p *Plan, name string) bool {
	_, ok := slices.BinarySearchFunc(p.entries, name, func(e entry, n string) int { return strings.Compare(e.name, n) })
	return ok
}

func TestMakePlan(t *testing.T) {
	root := fakeHost(t)
	plan, err := MakePlan(Config{HostRoot: root, Packages: []string{"dash", "mawk"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"package file through a symlinked dir", "usr/bin/dash", true},
		{"dependency", "usr/lib/libc.so.6", true},
		{"symlink", "usr/bin/sh", true},
		{"usrmerge link", "bin", true},
		{"alternative link", "usr/bin/awk", true},
		{"alternative", "etc/alternatives/awk", true},
		{"docs excluded", "usr/share/doc/dash/README", false},
		{"secret excluded", "etc/shadow", false},
		{"no path through a link", "bin/dash", false},
		{"tenon mount point", "usr/local/bin/tenon", true},
		{"workspace", "workspace", true},
		{"tmp", "tmp", true},
	}
	for _, tt := range tests {
		if got := planHas(plan, tt.path); got != tt.want {
			t.Errorf("%s: Has(%s) = %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
	if _, err := MakePlan(Config{HostRoot: root, Packages: []string{"python3"}}); !errors.Is(err, ErrNoPackage) {
		t.Errorf("missing package: %v, want ErrNoPackage", err)
	}
}

func TestWriteTar(t *testing.T) {
	root := fakeHost(t)
	plan, err := MakePlan(Config{HostRoot: root, Packages: []string{"dash"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := plan.WriteTar(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*tar.Header{}
	content := map[string]string{}
	tr := tar.NewReader(&buf)
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := got[h.Name]; dup {
			t.Errorf("duplicate entry %s", h.Name)
		}
		got[h.Name] = h
		b, _ := io.ReadAll(tr)
		content[h.Name] = string(b)
		total += int64(len(b))
	}
	if total != n {
		t.Errorf("WriteTar reported %d bytes, tar holds %d", n, total)
	}
	tests := []struct {
		name     string
		typ      byte
		mode     int64
		link     string
		contents string
	}{
		{"usr/bin/dash", tar.TypeReg, 0o755, "", "#!dash"},
		{"usr/bin/sh", tar.TypeSymlink, 0o777, "dash", ""},
		{"bin", tar.TypeSymlink, 0o777, "usr/bin", ""},
		{"tmp/", tar.TypeDir, 0o1777, "", ""},
		{"usr/", tar.TypeDir, 0o755, "", ""},
		{"etc/passwd", tar.TypeReg, 0o644, "", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
	}
	for _, tt := range tests {
		h := got[tt.name]
		if h == nil {
			t.Errorf("%s missing", tt.name)
			continue
		}
		if h.Typeflag != tt.typ || h.Mode != tt.mode || h.Linkname != tt.link || content[tt.name] != tt.contents {
			t.Errorf("%s: type %c mode %o link %q content %q; want %c %o %q %q",
				tt.name, h.Typeflag, h.Mode, h.Linkname, content[tt.name], tt.typ, tt.mode, tt.link, tt.contents)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s owned by %d:%d, want root", tt.name, h.Uid, h.Gid)
		}
	}
}

func TestMakePlanExtraAndBytecode(t *testing.T) {
	root := fakeHost(t)
	for p, data := range map[string]string{
		"usr/lib/python3/mod.py":                           "x = 1",
		"usr/lib/python3/__pycache__/mod.cpython-313.pyc":  "pyc",
		"usr/lib/python3/__pycache__/gone.cpython-313.pyc": "orphan",
		"etc/ld.so.cache":                                  "cache",
		"etc/ssl/certs/ca.pem":                             "cert",
		"etc/ssl/private/key.pem":                          "secret",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(root, "var/lib/dpkg/info/mawk.list")
	if err := os.WriteFile(list, []byte("/usr/bin/mawk\n/usr/lib/python3/mod.py\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{HostRoot: root, Packages: []string{"mawk"}, Extra: []string{"/etc/ld.so.cache", "/etc/ssl", "/etc/missing"}}
	plain, err := MakePlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bytecode = true
	plan, err := MakePlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path        string
		plain, with bool
	}{
		{"usr/lib/python3/mod.py", true, true},
		{"usr/lib/python3/__pycache__/mod.cpython-313.pyc", false, true},
		{"usr/lib/python3/__pycache__/gone.cpython-313.pyc", false, false}, // no module in the image
		{"etc/ld.so.cache", true, true},
		{"etc/ssl/certs/ca.pem", true, true},
		{"etc/ssl/private/key.pem", false, false}, // DefaultExclude
		{"etc/missing", false, false},
	}
	for _, tt := range tests {
		if got := planHas(plain, tt.path); got != tt.plain {
			t.Errorf("without Bytecode: Has(%s) = %v, want %v", tt.path, got, tt.plain)
		}
		if got := planHas(plan, tt.path); got != tt.with {
			t.Errorf("with Bytecode: Has(%s) = %v, want %v", tt.path, got, tt.with)
		}
	}
	if _, err := MakePlan(Config{HostRoot: root, Packages: []string{"mawk"}, Extra: []string{"etc/ssl"}}); err == nil {
		t.Error("a relative extra path was accepted")
	}
}

func TestStoreConfig(t *testing.T) {
	c := StoreConfig([]string{"time", "bash"})
	if !slices.Equal(c.Packages, append(slices.Clone(DefaultPackages), "time")) || !c.Bytecode || len(c.Extra) == 0 {
		t.Errorf("StoreConfig = %+v, want the default packages, time, the extra paths and bytecode", c)
	}
}
