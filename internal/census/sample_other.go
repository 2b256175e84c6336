//go:build !linux

package census

import (
	"context"
	"errors"
)

// Sample is only implemented on Linux.
func Sample(ctx context.Context, opts Options) (*Snapshot, error) {
	return nil, errors.ErrUnsupported
}
