package image

import (
	"path/filepath"
	"slices"
)

// DefaultName is the base image tenon's docker backend runs.
const DefaultName = "tenon-base:latest"

// TenonPath is where the docker backend bind-mounts the tenon binary
// (read-only) in every container; the image holds an empty file there.
const TenonPath = "/usr/local/bin/tenon"

// DefaultPackages are the host packages whose dependency closure forms the
// image: a shell, the core tools the harness and tests use, and python3.
var DefaultPackages = []string{
	"base-files", "dash", "bash", "coreutils", "util-linux", "procps", "grep", "sed",
	"findutils", "diffutils", "tar", "gzip", "mawk", "python3",
}

// DefaultExclude are path prefixes never copied: documentation, locales and
// secrets.
var DefaultExclude = []string{
	"/usr/share/doc", "/usr/share/man", "/usr/share/info", "/usr/share/locale",
	"/usr/share/lintian", "/usr/share/bug", "/usr/share/common-licenses",
	"/etc/shadow", "/etc/gshadow", "/etc/ssl/private", "/etc/ssh",
	"/var/lib/dpkg", "/var/cache", "/var/log",
}

// StoreExtra are the host paths StoreConfig adds to the packages' files:
// what no package lists but a sandbox of the process backend's host image
// sees in its /etc (the dynamic linker's cache, CA certificates, time zone
// and OS release), so that the image's programs find what they find there.
var StoreExtra = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ssl/certs",
	"/etc/localtime", "/etc/timezone", "/etc/os-release", "/etc/debian_version",
	"/etc/protocols", "/etc/services", "/etc/mime.types",
}

// StoreConfig is the Config of an image for the process backend's image
// store (tenon image build): DefaultPackages and packages, StoreExtra, and
// the host's compiled Python bytecode of the packages' modules (the image's
// lower directories are read-only to its sandboxes; without it every
// sandbox would compile and write its own).
func StoreConfig(packages []string) Config {
	pkgs := slices.Clone(DefaultPackages)
	for _, p := range packages {
		if !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	return Config{Packages: pkgs, Extra: StoreExtra, Bytecode: true}
}

// Config says what goes into the image and where the host's files are.
type Config struct {
	Packages []string // root packages; DefaultPackages when nil
	Exclude  []string // path prefixes left out; DefaultExclude when nil
	// Extra are host paths (absolute; those missing are skipped) added
	// with everything below them, unless Exclude leaves them out.
	Extra []string
	// Bytecode adds the host's compiled bytecode of the packages' Python
	// modules (__pycache__/<module>.*.pyc next to <module>.py).
	Bytecode bool
	HostRoot string // host root file system; "/" when ""
	DpkgDir  string // dpkg database; <HostRoot>/var/lib/dpkg when ""
	Force    bool   // import even when the existing image has the plan's fingerprint
}

func (c Config) withDefaults() Config {
	if c.Packages == nil {
		c.Packages = DefaultPackages
	}
	if c.Exclude == nil {
		c.Exclude = DefaultExclude
	}
	if c.HostRoot == "" {
		c.HostRoot = "/"
	}
	if c.DpkgDir == "" {
		c.DpkgDir = filepath.Join(c.HostRoot, "var/lib/dpkg")
	}
	return c
}
