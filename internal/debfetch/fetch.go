package debfetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// CacheDir is $env when set, else sub under tenon's directory in the
// user's cache directory ($XDG_CACHE_HOME/tenon, else ~/.cache/tenon).
func CacheDir(env, sub string) (string, error) {
	if d := os.Getenv(env); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("debfetch: no cache directory (set %s): %w", env, err)
	}
	return filepath.Join(d, "tenon", sub), nil
}

// Package is a Debian package pinned by checksum and the binaries wanted
// from it.
type Package struct {
	Name, Version string
	// URLs are tried in order (the pool, then a snapshot mirror).
	URLs   []string
	SHA256 string // of the .deb
	// Files maps a member of the package's data ("usr/bin/ctr") to the
	// SHA-256 of its content; each is cached under its base name.
	Files map[string]string
}

// Dir is where p's binaries are cached under root:
// root/<name>/<version>.
func (p Package) Dir(root string) string { return filepath.Join(root, p.Name, p.Version) }

// Install returns the cached path of every file of p by base name,
// fetching and unpacking the package first when a file is missing or
// differs from its pin.
func (p Package) Install(ctx context.Context, root string) (map[string]string, error) {
	dir := p.Dir(root)
	paths, ok := p.cached(dir)
	if ok {
		return paths, nil
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return nil, &UnavailableError{What: "dpkg-deb (to unpack " + p.Name + ")", Err: err}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("debfetch: cache for %s: %w", p.Name, err)
	}
	deb, err := p.download(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer os.Remove(deb)
	if err := p.unpack(ctx, deb, dir); err != nil {
		return nil, err
	}
	return paths, nil
}

// cached reports whether every file is in dir with its pinned content.
func (p Package) cached(dir string) (map[string]string, bool) {
	paths := map[string]string{}
	ok := true
	for member, want := range p.Files {
		path := filepath.Join(dir, filepath.Base(member))
		paths[filepath.Base(member)] = path
		if got, err := SumFile(path); err != nil || got != want {
			ok = false
		}
	}
	return paths, ok
}

// download fetches the .deb into dir from the first URL that serves it.
func (p Package) download(ctx context.Context, dir string) (string, error) {
	return Download(ctx, p.Name+" "+p.Version, p.URLs, dir, p.SHA256)
}

// Download fetches a file pinned by its SHA-256 into a new file in dir
// from the first of urls that serves it, and returns its path. A file that
// differs from the pin is a *ChecksumError at once (the other URLs are
// not tried: the pin or the mirror is wrong); when no URL serves it, an
// *UnavailableError naming what.
func Download(ctx context.Context, what string, urls []string, dir, sha string) (string, error) {
	var errs []error
	for _, u := range urls {
		path, err := get(ctx, u, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got, err := SumFile(path)
		if err == nil && got != sha {
			err = &ChecksumError{What: u, Got: got, Want: sha}
		}
		if err != nil {
			os.Remove(path)
			return "", err
		}
		return path, nil
	}
	return "", &UnavailableError{What: what, Err: errors.Join(errs...)}
}

// get writes the body of url to a new file in dir.
func get(ctx context.Context, url, dir string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.CreateTemp(dir, "download-*.deb")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	return f.Name(), f.Close()
}

// unpack extracts the package into a temporary directory next to dir and
// moves the pinned files into dir, each checked.
func (p Package) unpack(ctx context.Context, deb, dir string) error {
	tmp, err := os.MkdirTemp(dir, "unpack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("debfetch: dpkg-deb -x %s: %w: %s", filepath.Base(deb), err, strings.TrimSpace(string(out)))
	}
	members := make([]string, 0, len(p.Files))
	for m := range p.Files {
		members = append(members, m)
	}
	sort.Strings(members)
	for _, m := range members {
		src := filepath.Join(tmp, m)
		got, err := SumFile(src)
		if err != nil {
			return fmt.Errorf("debfetch: %s has no %s: %w", p.Name, m, err)
		}
		if got != p.Files[m] {
			return &ChecksumError{What: p.Name + ":" + m, Got: got, Want: p.Files[m]}
		}
		if err := os.Chmod(src, 0o755); err != nil {
			return err
		}
		if err := os.Rename(src, filepath.Join(dir, filepath.Base(m))); err != nil {
			return err
		}
	}
	return nil
}

// SumFile is the hex SHA-256 of a file's content.
func SumFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
