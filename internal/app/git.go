package app

import (
	"os/exec"
	"runtime/debug"
	"strings"
)

// GitCommit is the commit results files name: the one the running binary
// was built from (its VCS stamp), or, for a binary built without one (go
// run, or GOFLAGS=-buildvcs=false: build with -buildvcs=true then), the
// commit checked out in the working directory; "unknown" when neither is
// known.
func GitCommit() string {
	if rev, _, ok := BuildVCS(); ok {
		return rev
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// GitDirty reports whether the tree GitCommit names had uncommitted
// changes: the binary's stamp says so, or else the working directory.
func GitDirty() bool {
	if _, modified, ok := BuildVCS(); ok {
		return modified
	}
	out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return err == nil && len(strings.TrimSpace(string(out))) > 0
}

// BuildVCS is the binary's git stamp: its revision and whether the tree
// was modified; ok is false without one.
func BuildVCS() (rev string, modified, ok bool) {
	bi, found := debug.ReadBuildInfo()
	if !found {
		return "", false, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified, rev != ""
}
