package sandbox

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Sentinel errors. Backends wrap them with context; callers test them with errors.Is.
var (
	// ErrNotFound means no live sandbox has the given id in this backend
	// (it was never created, or it was destroyed).
	ErrNotFound = errors.New("sandbox: no such sandbox")

	// ErrExists means Create was called with an id that is already in use.
	ErrExists = errors.New("sandbox: a sandbox with this id already exists")

	// ErrInvalidSpec means a Spec or ExecRequest was malformed (bad id, empty
	// command, relative cwd, bad environment entry).
	ErrInvalidSpec = errors.New("sandbox: invalid request")

	// ErrSandboxDead means the sandbox's init process exited: the sandbox
	// cannot run actions any more and should be destroyed.
	ErrSandboxDead = errors.New("sandbox: sandbox init has exited")

	// ErrUnsupportedImage means the backend cannot provide the requested base image.
	ErrUnsupportedImage = errors.New("sandbox: unsupported base image")

	// ErrClosed means the backend was closed.
	ErrClosed = errors.New("sandbox: backend closed")
)

// ValidateExec checks the form of an action: exactly one of Argv and
// Shell, an absolute Cwd when set, KEY=VALUE environment entries (non-empty
// KEY, no NUL) and no negative timeout or output limit. The error wraps
// ErrInvalidSpec.
func ValidateExec(req ExecRequest) error {
	switch {
	case len(req.Argv) == 0 && req.Shell == "":
		return fmt.Errorf("no command (set Argv or Shell): %w", ErrInvalidSpec)
	case len(req.Argv) > 0 && req.Shell != "":
		return fmt.Errorf("both Argv and Shell set: %w", ErrInvalidSpec)
	case req.Cwd != "" && !path.IsAbs(req.Cwd):
		return fmt.Errorf("cwd %q is not absolute: %w", req.Cwd, ErrInvalidSpec)
	case req.OutputLimit < 0 || req.Timeout < 0:
		return fmt.Errorf("negative output limit or timeout: %w", ErrInvalidSpec)
	}
	for _, kv := range req.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return fmt.Errorf("environment entry %q must be KEY=VALUE: %w", kv, ErrInvalidSpec)
		}
	}
	return nil
}

var idPattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

// ValidateID checks that id matches [a-zA-Z0-9_.-]{1,64} and is not "." or
// "..": ids become path components and cgroup names.
func ValidateID(id string) error {
	if !idPattern.MatchString(id) || id == "." || id == ".." {
		return fmt.Errorf("sandbox id %q: must match [a-zA-Z0-9_.-]{1,64} and not be . or ..: %w", id, ErrInvalidSpec)
	}
	return nil
}

// reservedTargets are the sandbox paths a Bind may not cover, nor lie
// below: the system directories, the kernel's file systems, the workspace
// and where the tenon binary appears.
var reservedTargets = []string{"/proc", "/sys", "/dev", "/etc", "/usr", "/bin", "/sbin",
	"/lib", "/lib32", "/lib64", "/libx32", WorkspaceMount}

// ValidateBinds checks Spec.Binds: absolute sources, targets that are
// clean absolute paths other than / and outside reservedTargets, and no
// target twice. The error wraps ErrInvalidSpec.
func ValidateBinds(binds []Bind) error {
	seen := map[string]bool{}
	for _, b := range binds {
		if !path.IsAbs(b.Source) {
			return fmt.Errorf("bind source %q must be an absolute path: %w", b.Source, ErrInvalidSpec)
		}
		t := b.Target
		if !path.IsAbs(t) || path.Clean(t) != t || t == "/" {
			return fmt.Errorf("bind target %q must be a clean absolute path other than /: %w", t, ErrInvalidSpec)
		}
		for _, r := range reservedTargets {
			if t == r || strings.HasPrefix(t, r+"/") {
				return fmt.Errorf("bind target %q lies in %s, which the backend provides: %w", t, r, ErrInvalidSpec)
			}
		}
		if seen[t] {
			return fmt.Errorf("bind target %q appears twice: %w", t, ErrInvalidSpec)
		}
		seen[t] = true
	}
	return nil
}
