package debfetch

import "fmt"

// UnavailableError says a package could not be fetched or unpacked on
// this host (no network, no dpkg-deb): tests skip on it.
type UnavailableError struct {
	What string
	Err  error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("debfetch: %s unavailable: %v", e.What, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// ChecksumError says a download or an unpacked file is not the pinned one:
// the pin or the mirror is wrong, and nothing is cached.
type ChecksumError struct {
	What, Got, Want string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("debfetch: %s has SHA-256 %s, want %s (update the pin only after checking the new file)", e.What, e.Got, e.Want)
}
