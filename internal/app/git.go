package app

import (
	"os/exec"
	"strings"
)

// GitCommit is the commit checked out in the working directory, for
// results files; "unknown" outside a git tree.
func GitCommit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// gitDirty reports whether the working tree has uncommitted changes.
func gitDirty() bool {
	out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return err == nil && len(strings.TrimSpace(string(out))) > 0
}
