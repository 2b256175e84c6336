//go:build !linux

package disk

// Check fails: there are no loop devices.
func Check() error { return ErrUnsupported }

// Mount fails: there are no loop devices.
func Mount(image, dir string, size int64) error { return ErrUnsupported }

// Unmount does nothing.
func Unmount(dir string) error { return nil }
