//go:build !linux

package fsutil

import "io/fs"

func copyWhiteout(string, fs.FileInfo) (bool, error) { return false, nil }

func copyOverlayXattrs(string, string) error { return nil }
