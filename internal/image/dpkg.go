package image

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Package is one installed package from dpkg's status file.
type Package struct {
	Name      string
	Arch      string
	MultiArch string
	Depends   [][]string // each entry is a list of alternatives
	Provides  []string
}

// ParseStatus reads a dpkg status file (RFC 822 stanzas) and returns the
// installed packages by name. Packages not in the "install ok installed"
// state are left out.
func ParseStatus(r io.Reader) (map[string]*Package, error) {
	pkgs := map[string]*Package{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	fields := map[string]string{}
	var last string
	flush := func() {
		defer clear(fields)
		name := fields["Package"]
		if name == "" || !strings.HasSuffix(fields["Status"], " installed") || strings.Contains(fields["Status"], "not-installed") {
			return
		}
		p := &Package{Name: name, Arch: fields["Architecture"], MultiArch: fields["Multi-Arch"]}
		for _, key := range []string{"Pre-Depends", "Depends"} {
			p.Depends = append(p.Depends, parseRelations(fields[key])...)
		}
		for _, alts := range parseRelations(fields["Provides"]) {
			p.Provides = append(p.Provides, alts...)
		}
		pkgs[name] = p
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
			last = ""
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				fields[last] += "\n" + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("dpkg status: malformed line %q", line)
			}
			last = k
			fields[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading dpkg status: %w", err)
	}
	flush()
	return pkgs, nil
}

// parseRelations splits "a (>= 1), b:any | c" into [[a] [b c]], dropping
// versions and architecture qualifiers.
func parseRelations(s string) [][]string {
	var out [][]string
	for _, group := range strings.Split(s, ",") {
		var alts []string
		for _, alt := range strings.Split(group, "|") {
			alt = strings.TrimSpace(alt)
			if i := strings.IndexAny(alt, " ([<"); i >= 0 {
				alt = alt[:i]
			}
			alt, _, _ = strings.Cut(alt, ":")
			if alt != "" {
				alts = append(alts, alt)
			}
		}
		if len(alts) > 0 {
			out = append(out, alts)
		}
	}
	return out
}

// Closure returns the sorted names of roots and every package they depend
// on, transitively. An alternative is satisfied by the first installed
// package named or providing it; a dependency nothing installed satisfies is
// skipped (it is optional on this host), but missing roots are an error
// wrapping ErrNoPackage that names all of them.
func Closure(pkgs map[string]*Package, roots []string) ([]string, error) {
	providers := map[string][]string{}
	for _, p := range pkgs {
		for _, v := range p.Provides {
			providers[v] = append(providers[v], p.Name)
		}
	}
	for _, v := range providers {
		slices.Sort(v)
	}
	resolve := func(name string) string {
		if _, ok := pkgs[name]; ok {
			return name
		}
		if p := providers[name]; len(p) > 0 {
			return p[0]
		}
		return ""
	}
	seen := map[string]bool{}
	var queue, missing []string
	for _, r := range roots {
		n := resolve(r)
		if n == "" {
			missing = append(missing, r)
			continue
		}
		if !seen[n] {
			seen[n] = true
			queue = append(queue, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s (install them with apt-get or leave them out of the image's package list)",
			ErrNoPackage, strings.Join(missing, ", "))
	}
	for len(queue) > 0 {
		p := pkgs[queue[0]]
		queue = queue[1:]
		for _, alts := range p.Depends {
			for _, a := range alts {
				if n := resolve(a); n != "" {
					if !seen[n] {
						seen[n] = true
						queue = append(queue, n)
					}
					break
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// ParseFileList reads a dpkg .list file: one absolute path a line.
func ParseFileList(r io.Reader) ([]string, error) {
	var paths []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "/") && l != "/." {
			paths = append(paths, l)
		}
	}
	return paths, sc.Err()
}

// packageFiles reads the file list of an installed package from
// <infoDir>/<name>.list or <infoDir>/<name>:<arch>.list.
func packageFiles(infoDir string, p *Package) ([]string, error) {
	candidates := []string{p.Name + ".list", p.Name + ":" + p.Arch + ".list"}
	for _, c := range candidates {
		f, err := os.Open(filepath.Join(infoDir, c))
		if err != nil {
			continue
		}
		paths, err := ParseFileList(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("reading file list of %s: %w", p.Name, err)
		}
		return paths, nil
	}
	return nil, fmt.Errorf("%w: no file list for %s in %s", ErrNoPackage, p.Name, infoDir)
}
