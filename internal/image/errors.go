package image

import (
	"errors"
	"fmt"
)

// ErrNotFound means the engine has no image of the requested name.
var ErrNotFound = errors.New("image: not found")

// ErrNoPackage means a package the image needs is not installed on the host
// (the rootfs is assembled from the host's installed packages).
var ErrNoPackage = errors.New("image: package not installed on the host")

// NotFoundError says which image is missing and how to build it. It wraps ErrNotFound.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("image %s not found: run 'tenon image build --docker'", e.Name)
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }
