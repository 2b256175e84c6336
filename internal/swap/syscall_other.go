//go:build !linux

package swap

// Swapon is unsupported off Linux.
func Swapon(path string, prio int) error { return ErrUnsupported }

// Swapoff is unsupported off Linux.
func Swapoff(path string) error { return ErrUnsupported }

func mknodBlock(path string, major, minor uint32) error { return ErrUnsupported }

// Lock is unsupported off Linux.
func Lock() (unlock func(), err error) { return nil, ErrUnsupported }
