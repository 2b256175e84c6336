package app

import (
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/imagestore"
)

// imageStoreDir is the image store of a state directory.
func imageStoreDir(stateDir string) string { return filepath.Join(stateDir, "images") }

// OpenImageStore opens the image store of a state directory
// (<stateDir>/images), the one `tenon image` fills and the process backend
// runs images from.
func OpenImageStore(stateDir string) (*imagestore.Store, error) {
	return imagestore.Open(imageStoreDir(stateDir))
}
