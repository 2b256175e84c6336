package disk

import "errors"

// ErrNoMkfs means mkfs.ext4 (e2fsprogs) is not installed: limits cannot
// be made.
var ErrNoMkfs = errors.New("disk: mkfs.ext4 not found (install e2fsprogs, or turn the disk limit off)")

// ErrUnsupported means the platform has no loop devices.
var ErrUnsupported = errors.New("disk: size-limited directories need Linux loop devices")
