package process

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// rtMount is where an image sandbox sees tenon's runtime: the executable,
// and, when it is dynamically linked, the host's loader and the libraries
// it needs (an image's own C library may be missing, older, or musl).
const rtMount = "/.tenon"

// hostRuntime is what runs the tenon executable in an image sandbox.
type hostRuntime struct {
	interp string            // host path of the ELF interpreter; "" when static
	libs   map[string]string // soname → host path (resolved)
}

// libDirs are searched, in order, for the executable's libraries.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// findRuntime reads the executable's ELF interpreter and needed libraries
// (transitively) and resolves them under hostRoot.
func findRuntime(exe, hostRoot string) (hostRuntime, error) {
	rt := hostRuntime{libs: map[string]string{}}
	f, err := elf.Open(exe)
	if err != nil {
		return rt, fmt.Errorf("reading %s: %w", exe, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return rt, fmt.Errorf("reading the interpreter of %s: %w", exe, err)
		}
		if i := slices.Index(b, 0); i >= 0 {
			b = b[:i]
		}
		if rt.interp, err = filepath.EvalSymlinks(filepath.Join(hostRoot, string(b))); err != nil {
			return rt, fmt.Errorf("the interpreter of %s: %w", exe, err)
		}
	}
	if rt.interp == "" {
		return rt, nil
	}
	queue, err := f.ImportedLibraries()
	if err != nil {
		return rt, fmt.Errorf("reading the libraries of %s: %w", exe, err)
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if _, ok := rt.libs[name]; ok {
			continue
		}
		p, err := findLib(hostRoot, name)
		if err != nil {
			return rt, err
		}
		rt.libs[name] = p
		lf, err := elf.Open(p)
		if err != nil {
			return rt, fmt.Errorf("reading %s: %w", p, err)
		}
		more, err := lf.ImportedLibraries()
		lf.Close()
		if err != nil {
			return rt, fmt.Errorf("reading the libraries of %s: %w", p, err)
		}
		queue = append(queue, more...)
	}
	return rt, nil
}

func findLib(hostRoot, name string) (string, error) {
	for _, d := range libDirs {
		p := filepath.Join(hostRoot, d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return filepath.EvalSymlinks(p)
		}
	}
	return "", fmt.Errorf("library %s of the tenon executable not found in %v", name, libDirs)
}

// initArgv is the command line of an image sandbox's executor: through the
// host's loader when the executable is dynamic (execArgv).
func (rt hostRuntime) initArgv() []string {
	if rt.interp == "" {
		return execArgv(rtMount + "/tenon")
	}
	return execArgv(rtMount+"/"+filepath.Base(rt.interp), "--library-path", rtMount+"/lib", rtMount+"/tenon")
}

// execArgv is the executor's command line for the command prefix that
// runs the tenon binary: prefix, initArg, prefix again (initArg).
func execArgv(prefix ...string) []string {
	return slices.Concat(prefix, []string{initArg}, prefix)
}

// wrapper is the /usr/local/bin/tenon of an image sandbox: a shell script
// running the bound executable through the host's loader (nil when the
// executable is static and is bound there itself).
func (rt hostRuntime) wrapper() []byte {
	if rt.interp == "" {
		return nil
	}
	return []byte("#!/bin/sh\nexec " + rtMount + "/" + filepath.Base(rt.interp) + " --library-path " + rtMount + "/lib " + rtMount + "/tenon \"$@\"\n")
}

// makeRuntimeDir creates dir with the mount points of the runtime's binds:
// tenon, the loader and lib/<soname>; and, for a dynamic executable, the
// wrapper script next to it (dir + ".sh").
func (rt hostRuntime) makeRuntimeDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
		return err
	}
	files := []string{"tenon"}
	if rt.interp != "" {
		files = append(files, filepath.Base(rt.interp))
	}
	for name := range rt.libs {
		files = append(files, filepath.Join("lib", name))
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o755); err != nil {
			return err
		}
	}
	if w := rt.wrapper(); w != nil {
		return os.WriteFile(dir+".sh", w, 0o755)
	}
	return nil
}
