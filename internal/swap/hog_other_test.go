//go:build !linux

package swap

// hog is only needed by the Linux live test.
func hog(n int) error { return ErrUnsupported }
