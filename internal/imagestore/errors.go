package imagestore

import "errors"

var (
	// ErrNotFound means no image has the name or id asked for.
	ErrNotFound = errors.New("imagestore: image not found")
	// ErrInUse means a live sandbox or agent uses the image, which
	// therefore cannot be removed.
	ErrInUse = errors.New("imagestore: image in use")
	// ErrAmbiguous means an id prefix matches more than one image.
	ErrAmbiguous = errors.New("imagestore: ambiguous image id prefix")
	// ErrCorrupt means a layer's content does not hash to the diff id
	// its image's config gives it: the source is corrupt or truncated.
	ErrCorrupt = errors.New("imagestore: corrupt layer")
	// ErrUnsupported means the source is not an image tenon can run here
	// (another OS or architecture, an unknown archive format).
	ErrUnsupported = errors.New("imagestore: unsupported image")
)
