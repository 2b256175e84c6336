package image

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// entry is one path of the image, relative to its root ("usr/bin/sh").
type entry struct {
	name string
	host string // host path to copy from; "" for a synthesized entry
	dir  bool
	mode fs.FileMode
	link string // symlink target
	data string // content of a synthesized file
}

// Plan is the list of paths the image will hold, parents first.
type Plan struct {
	entries  []entry
	Packages []string
}

// Len is the number of paths.
func (p *Plan) Len() int { return len(p.entries) }

// skeleton is what every image holds besides package files: the usrmerge
// links (mirrored from the host), the directories a container needs, mount
// points for the files the engine and tenon bind-mount, and a minimal
// passwd/group (the host's are not copied).
func skeleton(hostRoot string) []entry {
	es := []entry{
		{name: "tmp", dir: true, mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{name: "var/tmp", dir: true, mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{name: "root", dir: true, mode: fs.ModeDir | 0o700},
		{name: strings.TrimPrefix(sandboxWorkspace, "/"), dir: true, mode: fs.ModeDir | 0o755},
	}
	for _, d := range []string{"proc", "sys", "dev", "run", "opt", "home", "srv", "mnt", "etc", "usr/local/bin"} {
		es = append(es, entry{name: d, dir: true, mode: fs.ModeDir | 0o755})
	}
	for _, f := range []string{"etc/hosts", "etc/hostname", "etc/resolv.conf"} {
		es = append(es, entry{name: f, mode: 0o644})
	}
	es = append(es,
		entry{name: strings.TrimPrefix(TenonPath, "/"), mode: 0o755},
		entry{name: "etc/passwd", mode: 0o644, data: "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
		entry{name: "etc/group", mode: 0o644, data: "root:x:0:\nnogroup:x:65534:\n"},
	)
	for _, l := range []string{"bin", "sbin", "lib", "lib64", "lib32", "libx32"} {
		if target, err := os.Readlink(filepath.Join(hostRoot, l)); err == nil {
			es = append(es, entry{name: l, link: target, mode: fs.ModeSymlink | 0o777})
		}
	}
	return es
}

// sandboxWorkspace is where sandboxes mount the agent's workspace.
const sandboxWorkspace = "/workspace"

// MakePlan resolves cfg's packages against the host's dpkg database and
// lists every file the image will hold.
func MakePlan(cfg Config) (*Plan, error) {
	cfg = cfg.withDefaults()
	f, err := os.Open(filepath.Join(cfg.DpkgDir, "status"))
	if err != nil {
		return nil, fmt.Errorf("reading the host's package database (the image is built from installed Debian packages): %w", err)
	}
	pkgs, err := ParseStatus(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	names, err := Closure(pkgs, cfg.Packages)
	if err != nil {
		return nil, err
	}
	byName := map[string]entry{}
	add := func(e entry) {
		if _, ok := byName[e.name]; !ok {
			byName[e.name] = e
		}
	}
	for _, e := range skeleton(cfg.HostRoot) {
		byName[e.name] = e
	}
	excluded := func(p string) bool {
		for _, x := range cfg.Exclude {
			if p == x || strings.HasPrefix(p, strings.TrimSuffix(x, "/")+"/") {
				return true
			}
		}
		return false
	}
	for _, n := range names {
		paths, err := packageFiles(filepath.Join(cfg.DpkgDir, "info"), pkgs[n])
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			name, err := canonical(cfg.HostRoot, p)
			if err != nil || excluded("/"+name) {
				continue
			}
			e, ok := hostEntry(cfg.HostRoot, name)
			if ok {
				add(e)
			}
		}
	}
	addAlternatives(cfg, byName, add)
	if cfg.Bytecode {
		addBytecode(cfg.HostRoot, byName, add)
	}
	if err := addExtra(cfg, excluded, add); err != nil {
		return nil, err
	}
	// Every parent directory of every entry.
	for name := range byName {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if _, ok := byName[d]; ok {
				continue
			}
			if e, ok := hostEntry(cfg.HostRoot, d); ok && e.dir {
				byName[d] = e
			} else {
				byName[d] = entry{name: d, dir: true, mode: fs.ModeDir | 0o755}
			}
		}
	}
	plan := &Plan{Packages: names}
	for _, e := range byName {
		plan.entries = append(plan.entries, e)
	}
	slices.SortFunc(plan.entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return plan, nil
}

// canonical maps a host path as dpkg lists it ("/lib/x86_64-linux-gnu/libc.so.6")
// to its real location below hostRoot with symlinked parents resolved
// ("usr/lib/x86_64-linux-gnu/libc.so.6"), so the tar never writes through a link.
func canonical(hostRoot, p string) (string, error) {
	dir, err := filepath.EvalSymlinks(filepath.Join(hostRoot, path.Dir(p)))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(hostRoot, filepath.Join(dir, path.Base(p)))
	if err != nil || strings.HasPrefix(rel, "..") || rel == "." {
		return "", fmt.Errorf("image: %s is outside the host root", p)
	}
	return filepath.ToSlash(rel), nil
}

// hostEntry describes the host file at name (relative); ok is false for
// missing files and for sockets, devices and fifos.
func hostEntry(hostRoot, name string) (entry, bool) {
	hp := filepath.Join(hostRoot, name)
	fi, err := os.Lstat(hp)
	if err != nil {
		return entry{}, false
	}
	e := entry{name: name, host: hp, mode: fi.Mode()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if e.link, err = os.Readlink(hp); err != nil {
			return entry{}, false
		}
	case fi.IsDir():
		e.dir = true
	case !fi.Mode().IsRegular():
		return entry{}, false
	}
	return e, true
}

// addAlternatives adds the update-alternatives links ("/usr/bin/awk" ->
// "/etc/alternatives/awk" -> "/usr/bin/mawk") whose final target is in the image.
func addAlternatives(cfg Config, have map[string]entry, add func(entry)) {
	dir := filepath.Join(cfg.DpkgDir, "alternatives")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range ents {
		link, err := alternativeLink(filepath.Join(dir, de.Name()))
		if err != nil {
			continue
		}
		alt := "etc/alternatives/" + de.Name()
		target, err := os.Readlink(filepath.Join(cfg.HostRoot, alt))
		if err != nil || !path.IsAbs(target) {
			continue
		}
		t, err := canonical(cfg.HostRoot, target)
		if err != nil {
			continue
		}
		if _, ok := have[t]; !ok {
			continue
		}
		l, err := canonical(cfg.HostRoot, link)
		if err != nil {
			continue
		}
		if e, ok := hostEntry(cfg.HostRoot, alt); ok {
			add(e)
		}
		if e, ok := hostEntry(cfg.HostRoot, l); ok && e.link != "" {
			add(e)
		}
	}
}

// alternativeLink reads the link path (second line) of a dpkg alternatives file.
func alternativeLink(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 2 && sc.Scan(); i++ {
		if i == 1 && strings.HasPrefix(sc.Text(), "/") {
			return sc.Text(), nil
		}
	}
	return "", errors.New("no link line")
}

// addBytecode adds the host's compiled bytecode of every Python module in
// have: __pycache__/<module>.<tag>.pyc next to <module>.py.
func addBytecode(hostRoot string, have map[string]entry, add func(entry)) {
	dirs := map[string]bool{}
	for name, e := range have {
		if strings.HasSuffix(name, ".py") && e.host != "" && e.link == "" && !e.dir {
			dirs[path.Dir(name)] = true
		}
	}
	for d := range dirs {
		cache := path.Join(d, "__pycache__")
		ents, err := os.ReadDir(filepath.Join(hostRoot, cache))
		if err != nil {
			continue
		}
		for _, de := range ents {
			module, _, _ := strings.Cut(de.Name(), ".")
			if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".pyc") {
				continue
			}
			if _, ok := have[path.Join(d, module+".py")]; !ok {
				continue
			}
			if e, ok := hostEntry(hostRoot, path.Join(cache, de.Name())); ok {
				add(e)
			}
		}
	}
}

// addExtra adds cfg.Extra's host paths with everything below them (links
// not followed), except what excluded leaves out.
func addExtra(cfg Config, excluded func(string) bool, add func(entry)) error {
	for _, x := range cfg.Extra {
		if !path.IsAbs(x) {
			return fmt.Errorf("image: extra path %q is not absolute", x)
		}
		top, err := canonical(cfg.HostRoot, x)
		if err != nil {
			continue // missing on this host
		}
		err = filepath.WalkDir(filepath.Join(cfg.HostRoot, top), func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: left out
			}
			rel, err := filepath.Rel(cfg.HostRoot, p)
			if err != nil {
				return err
			}
			name := filepath.ToSlash(rel)
			if excluded("/" + name) {
				if de.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if e, ok := hostEntry(cfg.HostRoot, name); ok {
				add(e)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("image: adding %s: %w", x, err)
		}
	}
	return nil
}
