package cgroup

import "os"

// RequireRoot returns ErrNotRoot unless the process runs with euid 0.
func RequireRoot() error {
	return requireRoot(os.Geteuid())
}

func requireRoot(euid int) error {
	if euid != 0 {
		return ErrNotRoot
	}
	return nil
}
