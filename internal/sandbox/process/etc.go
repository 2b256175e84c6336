package process

import (
	"fmt"
	"os"
	"path/filepath"
)

// The sandboxes' /etc is generated, not the host's: the host's holds
// secrets (shadow, gshadow, ssh host keys, ssl/private, credentials in
// pip.conf or gitconfig) that uid 0 in a sandbox could read. New writes one
// read-only tree for all sandboxes, <StateDir>/etc, with its own passwd,
// group and nsswitch.conf; the public host entries tools need (hostEtc)
// appear in it as read-only binds (copied when they are symlinks), and each
// sandbox gets its own hosts file and, with Spec.Network, the host's
// resolv.conf.

// hostEtc are the host /etc entries (paths relative to /etc, glob patterns
// allowed) every sandbox sees: the dynamic linker's cache, Debian's
// alternatives (/usr/bin/which, awk, ... are links through it), CA
// certificates (not the private keys next to them), time zone, OS release
// and the protocol, service and MIME tables, Python's site configuration.
var hostEtc = []string{
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
	"ssl/certs", "ssl/openssl.cnf", "ca-certificates", "pki/tls/certs", "pki/ca-trust/extracted",
	"localtime", "timezone", "os-release", "debian_version", "lsb-release",
	"protocols", "services", "networks", "mime.types", "python3*",
}

// nsswitch is the sandboxes' /etc/nsswitch.conf: files only, and DNS for
// hosts (useful with Spec.Network).
const nsswitch = `passwd: files
group: files
shadow: files
hosts: files dns
networks: files
protocols: files
services: files
ethers: files
rpc: files
`

// etcBind is one host path bound read-only into the sandboxes' /etc.
type etcBind struct {
	src string // host path
	dst string // path inside the sandbox, under /etc
}

// makeEtc writes the shared /etc tree into dir (replacing what an earlier
// backend left there) from the host root hostRoot, and returns the host
// entries to bind into it, in mount order. The tree holds a mount point for
// every bind, and for the per-sandbox hosts and resolv.conf.
func makeEtc(dir, hostRoot string) ([]etcBind, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("generating /etc: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("generating /etc: %w", err)
	}
	shell := "/bin/sh"
	if _, err := os.Stat(filepath.Join(hostRoot, "bin/bash")); err == nil {
		shell = "/bin/bash"
	}
	files := []struct {
		name, content string
	}{
		{"passwd", "root:x:0:0:root:/root:" + shell + "\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
		{"group", "root:x:0:\ntty:x:5:\nusers:x:100:\nnogroup:x:65534:\n"},
		{"nsswitch.conf", nsswitch},
		{"hosts", ""},       // mount point of the sandbox's own
		{"resolv.conf", ""}, // mount point of the host's, with Spec.Network
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.content), 0o644); err != nil {
			return nil, fmt.Errorf("generating /etc: %w", err)
		}
	}
	hostDir := filepath.Join(hostRoot, "etc")
	var binds []etcBind
	for _, pat := range hostEtc {
		matches, err := filepath.Glob(filepath.Join(hostDir, pat))
		if err != nil {
			return nil, fmt.Errorf("generating /etc: %w", err)
		}
		for _, src := range matches {
			rel, _ := filepath.Rel(hostDir, src)
			b, err := etcEntry(dir, src, rel)
			if err != nil {
				return nil, fmt.Errorf("generating /etc/%s: %w", rel, err)
			}
			if b != nil {
				binds = append(binds, *b)
			}
		}
	}
	return binds, nil
}

// etcEntry copies the host entry src (rel below /etc) into dir when it is a
// symlink, or makes its mount point and returns the bind when it is a
// directory or regular file. Other kinds are left out.
func etcEntry(dir, src, rel string) (*etcBind, error) {
	fi, err := os.Lstat(src)
	if err != nil {
		return nil, err
	}
	dst := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(src)
		if err != nil {
			return nil, err
		}
		return nil, os.Symlink(t, dst)
	case fi.IsDir():
		if err := os.Mkdir(dst, 0o755); err != nil {
			return nil, err
		}
	case fi.Mode().IsRegular():
		if err := os.WriteFile(dst, nil, 0o644); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	return &etcBind{src: src, dst: "/etc/" + filepath.ToSlash(rel)}, nil
}

// writeHosts writes a sandbox's /etc/hosts: loopback names and its hostname.
func writeHosts(path, hostname string) error {
	content := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t" + hostname + "\n"
	return os.WriteFile(path, []byte(content), 0o644)
}

// hostResolvConf is the host file a networked sandbox's /etc/resolv.conf
// binds (symlinks resolved, as systemd-resolved's stub is one), or "" when
// the host has none.
func hostResolvConf(hostRoot string) string {
	p, err := filepath.EvalSymlinks(filepath.Join(hostRoot, "etc/resolv.conf"))
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}
