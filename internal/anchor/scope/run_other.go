//go:build !linux

package scope

import (
	"context"
	"errors"
)

func (r *Runner) runInScope(ctx context.Context, path string, req Request) (Result, error) {
	return Result{}, errors.New("scope: memory scopes need Linux cgroups")
}
