package swarm

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// ToolsDir is the directory inside the repository that holds what the
// "image" adds to it: the gopls binary (bin/gopls) and a warm Go build
// cache (go-build). It sits in the shared lower layer, so every
// configuration sees one toolchain; the copied configuration links it
// instead of copying it.
const ToolsDir = ".tenon"

// Repo is the prepared workload repository: the shared read-only lower
// layer of the swarm.
type Repo struct {
	Dir   string   // the repository root
	Files []string // editable Go files (no tests, testdata, vendor or tools), relative, sorted
}

// goBin is the go command. The sandbox configuration needs GOROOT under
// /usr, which the process backend binds read-only into every sandbox.
func goBin() string { return filepath.Join(runtime.GOROOT(), "bin", "go") }

// goEnv is the environment of go commands and gopls for a sibling whose
// repository is at view and whose private temporary directory is tmp:
// offline, vendored, -trimpath (so the build cache is valid at any path),
// the build cache in the tools directory, gopls's own cache private.
func goEnv(view, tmp string) []string {
	return []string{
		"PATH=" + filepath.Join(runtime.GOROOT(), "bin") + ":/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + tmp,
		"TMPDIR=" + tmp,
		"GOFLAGS=-mod=vendor -trimpath -buildvcs=false",
		"GOPROXY=off",
		"GOTOOLCHAIN=local",
		"GOTELEMETRY=off",
		"GOCACHE=" + filepath.Join(view, ToolsDir, "go-build"),
		"XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"),
	}
}

// PrepareRepo copies the module at src into dir, vendors its dependencies
// (from the module cache, or the Go module proxy when missing), copies
// gopls into dir/.tenon/bin and warms dir/.tenon/go-build with one build
// and one test build of testPkg.
func PrepareRepo(ctx context.Context, src, dir, gopls, testPkg string) (*Repo, error) {
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		return nil, fmt.Errorf("%w: copying %s: %w", ErrRepo, src, err)
	}
	bin := filepath.Join(dir, ToolsDir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRepo, err)
	}
	if err := copyFile(gopls, filepath.Join(bin, "gopls"), 0o755); err != nil {
		return nil, fmt.Errorf("%w: copying gopls: %w", ErrRepo, err)
	}
	tmp := filepath.Join(filepath.Dir(dir), "prepare-tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRepo, err)
	}
	defer os.RemoveAll(tmp)
	env := goEnv(dir, tmp)
	vendorEnv := append(append([]string(nil), env...), "GOFLAGS=-mod=mod", "GOPROXY="+goEnvVar("GOPROXY"), "GOMODCACHE="+goEnvVar("GOMODCACHE"))
	steps := []struct {
		env  []string
		argv []string
	}{
		{vendorEnv, []string{goBin(), "mod", "vendor"}},
		{env, []string{goBin(), "build", "./..."}},
		{env, []string{goBin(), "test", "-count=1", testPkg}},
	}
	for _, st := range steps {
		cmd := exec.CommandContext(ctx, st.argv[0], st.argv[1:]...)
		cmd.Dir, cmd.Env = dir, st.env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%w: %s: %w\n%s", ErrRepo, strings.Join(st.argv[1:], " "), err, tail(out, 800))
		}
	}
	r := &Repo{Dir: dir}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(dir, p)
			r.Files = append(r.Files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: listing files: %w", ErrRepo, err)
	}
	slices.Sort(r.Files)
	if len(r.Files) == 0 {
		return nil, fmt.Errorf("%w: %s holds no Go files", ErrRepo, src)
	}
	return r, nil
}

// copyRepo copies the repository without its tools directory, which it
// links to the shared one (the copied configuration copies the repo, not
// the toolchain).
func copyRepo(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		switch {
		case e.Name() == ToolsDir:
			err = os.Symlink(s, d)
		case e.IsDir():
			err = os.CopyFS(d, os.DirFS(s))
		default:
			var st os.FileInfo
			if st, err = e.Info(); err == nil {
				err = copyFile(s, d, st.Mode().Perm())
			}
		}
		if err != nil {
			return fmt.Errorf("copying %s: %w", s, err)
		}
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}
