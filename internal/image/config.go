package image

import "path/filepath"

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

// Config says what goes into the image and where the host's files are.
type Config struct {
	Packages []string // root packages; DefaultPackages when nil
	Exclude  []string // path prefixes left out; DefaultExclude when nil
	HostRoot string   // host root file system; "/" when ""
	DpkgDir  string   // dpkg database; <HostRoot>/var/lib/dpkg when ""
	Force    bool     // import even when the existing image has the plan's fingerprint
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
