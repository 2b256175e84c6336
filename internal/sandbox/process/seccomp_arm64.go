//go:build linux

package process

import "golang.org/x/sys/unix"

// seccompArch is the native architecture's AUDIT_ARCH_ value.
const seccompArch = unix.AUDIT_ARCH_AARCH64

// deniedArch are the calls refused besides deniedCommon that only this
// architecture has: none.
var deniedArch []uint32
