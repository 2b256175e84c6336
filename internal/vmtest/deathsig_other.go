//go:build !linux

package vmtest

import "os/exec"

// killWithParent does nothing here: only Linux has a parent-death signal.
func killWithParent(*exec.Cmd) {}
