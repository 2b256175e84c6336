package process

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeEtc builds a host /etc with secrets next to the public entries.
func fakeEtc(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"etc/shadow":               "root:$6$secret:1::::::\n",
		"etc/passwd":               "root:x:0:0::/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n",
		"etc/pip.conf":             "[global]\nindex-url = https://user:token@mirror/simple\n",
		"etc/ssl/private/host.key": "KEY",
		"etc/ssl/certs/ca.pem":     "CERT",
		"etc/ld.so.cache":          "cache",
		"etc/python3.11/site.py":   "",
		"etc/alternatives/.keep":   "",
		"bin/bash":                 "",
	}
	for p, c := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../usr/lib/os-release", filepath.Join(root, "etc/os-release")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestMakeEtc(t *testing.T) {
	host := fakeEtc(t)
	dir := filepath.Join(t.TempDir(), "etc")
	// Leftovers of an earlier backend are replaced.
	if err := os.MkdirAll(filepath.Join(dir, "stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	binds, err := makeEtc(dir, host)
	if err != nil {
		t.Fatal(err)
	}
	var dsts []string
	for _, b := range binds {
		dsts = append(dsts, b.dst)
		if want := filepath.Join(host, b.dst); b.src != want {
			t.Errorf("bind %s from %s, want %s", b.dst, b.src, want)
		}
		// Each bind has its mount point in the tree.
		if _, err := os.Stat(filepath.Join(dir, strings.TrimPrefix(b.dst, "/etc/"))); err != nil {
			t.Errorf("mount point of %s: %v", b.dst, err)
		}
	}
	want := []string{"/etc/ld.so.cache", "/etc/alternatives", "/etc/ssl/certs", "/etc/python3.11"}
	if !slices.Equal(dsts, want) {
		t.Errorf("binds %q, want %q", dsts, want)
	}
	tests := []struct {
		name   string
		path   string // below dir
		want   string // content; "" with absent
		absent bool
	}{
		{name: "shadow", path: "shadow", absent: true},
		{name: "pip.conf", path: "pip.conf", absent: true},
		{name: "private keys", path: "ssl/private", absent: true},
		{name: "stale", path: "stale", absent: true},
		{name: "passwd", path: "passwd", want: "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
		{name: "nsswitch", path: "nsswitch.conf", want: nsswitch},
		{name: "hosts mount point", path: "hosts", want: ""},
		{name: "resolv.conf mount point", path: "resolv.conf", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join(dir, tt.path))
			if tt.absent {
				if !os.IsNotExist(err) {
					t.Fatalf("%s: %v, want absent", tt.path, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("%s = %q (%v), want %q", tt.path, got, err, tt.want)
			}
		})
	}
	if l, err := os.Readlink(filepath.Join(dir, "os-release")); err != nil || l != "../usr/lib/os-release" {
		t.Errorf("os-release -> %q (%v), want the host's symlink", l, err)
	}
}

func TestHostResolvConf(t *testing.T) {
	host := t.TempDir()
	if got := hostResolvConf(host); got != "" {
		t.Errorf("no resolv.conf: %q, want \"\"", got)
	}
	if err := os.MkdirAll(filepath.Join(host, "etc", "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(host, "etc", "run", "stub.conf")
	if err := os.WriteFile(real, []byte("nameserver 127.0.0.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run/stub.conf", filepath.Join(host, "etc", "resolv.conf")); err != nil {
		t.Fatal(err)
	}
	if got := hostResolvConf(host); got != real {
		t.Errorf("symlinked resolv.conf: %q, want %q", got, real)
	}
}

func TestWriteHosts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hosts")
	if err := writeHosts(p, "sb-1"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if !strings.Contains(string(got), "127.0.0.1\tlocalhost\n") || !strings.Contains(string(got), "127.0.1.1\tsb-1\n") {
		t.Errorf("hosts = %q", got)
	}
}
