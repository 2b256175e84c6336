//go:build !linux

package memtool

// SpawnDetached is unsupported off Linux.
func SpawnDetached(args []string) (int, error) { return 0, ErrUnsupported }

// ownAnon is not measured off Linux.
func ownAnon() int64 { return 0 }
