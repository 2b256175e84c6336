//go:build !linux

package ksm

// SetMemoryMerge is only supported on Linux.
func SetMemoryMerge(on bool) error { return ErrNotSupported }

// ExecWithMerge is only supported on Linux.
func ExecWithMerge(argv []string) error { return ErrNotSupported }
