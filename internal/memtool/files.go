package memtool

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
)

// writeFiles writes n bytes of incompressible data into one new file in dir
// and returns the file's path. It stops early when ctx ends.
func writeFiles(ctx context.Context, dir string, n int64, seed uint64) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating files directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "mem-*.bin")
	if err != nil {
		return "", fmt.Errorf("creating file: %w", err)
	}
	buf := make([]byte, 1<<20)
	var seedKey [32]byte
	for i := range 8 {
		seedKey[i] = byte(seed >> (8 * i))
	}
	_, _ = rand.NewChaCha8(seedKey).Read(buf)
	for left := n; left > 0; left -= int64(len(buf)) {
		if err := ctx.Err(); err != nil {
			f.Close()
			return f.Name(), err
		}
		if _, err := f.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			f.Close()
			return f.Name(), fmt.Errorf("writing %s: %w", f.Name(), err)
		}
	}
	if err := f.Close(); err != nil {
		return f.Name(), fmt.Errorf("closing %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}
