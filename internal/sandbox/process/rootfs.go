package process

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// systemDirs are the host directories every sandbox sees read-only. A
// directory that is a symlink on the host (merged /usr: /bin -> usr/bin) is
// recreated as the same symlink in the rootfs; one that is missing is left out.
// /etc is not among them: sandboxes get a generated one (etc.go).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}

// skeleton lists the directories created in every new rootfs, with modes.
var skeleton = []struct {
	path string
	mode os.FileMode
}{
	{"proc", 0o555}, {"dev", 0o755}, {"sys", 0o555}, {"etc", 0o755},
	{"tmp", os.ModeSticky | 0o777}, {"root", 0o700}, {"home", 0o755}, {"opt", 0o755},
	{"run", 0o755}, {"mnt", 0o755}, {"srv", 0o755},
	{"var", 0o755}, {"var/tmp", os.ModeSticky | 0o777}, {"var/log", 0o755}, {"var/cache", 0o755}, {"var/lib", 0o755},
	{"workspace", 0o755},
}

// systemDir is how one host system directory appears in a sandbox.
type systemDir struct {
	path   string // absolute, e.g. /bin
	target string // symlink target when the host entry is a symlink
}

// hostSystemDirs inspects the host root (hostRoot, "/" outside tests) for
// the entries of systemDirs.
func hostSystemDirs(hostRoot string) ([]systemDir, error) {
	var out []systemDir
	for _, d := range systemDirs {
		p := filepath.Join(hostRoot, d)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("inspecting host %s: %w", d, err)
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return nil, fmt.Errorf("reading host %s: %w", d, err)
			}
			out = append(out, systemDir{path: d, target: t})
		case fi.IsDir():
			out = append(out, systemDir{path: d})
		}
	}
	return out, nil
}

// makeRootfs creates the skeleton of a sandbox's root in dir (which must not
// exist): the writable directories, the symlinks of merged-/usr hosts and
// the mount points of the system binds.
func makeRootfs(dir string, sys []systemDir) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("creating rootfs: %w", err)
	}
	return completeRootfs(dir, sys)
}
