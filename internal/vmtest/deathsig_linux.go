package vmtest

import (
	"os/exec"
	"syscall"
)

// killWithParent makes the kernel kill cmd when the process that started
// it dies: a test binary that panics on -test.timeout exits without
// cancelling its context, and its QEMU was left running, orphaned.
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
