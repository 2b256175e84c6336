package imagestore

import (
	"context"
	"fmt"
	"runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// PullOptions configure Pull.
type PullOptions struct {
	ImportOptions
	// Insecure allows plain HTTP to the registry (loopback and private
	// addresses use it anyway).
	Insecure bool
}

// Pull fetches ref (linux/GOARCH from a multi-platform index) from its
// registry, with the credentials of the Docker config (~/.docker/
// config.json) when it has some, and adds it as Import does.
func (s *Store) Pull(ctx context.Context, ref string, opts PullOptions) (Image, error) {
	var nopts []name.Option
	if opts.Insecure {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return Image{}, fmt.Errorf("imagestore: %w", err)
	}
	desc, err := remote.Get(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	if err != nil {
		return Image{}, fmt.Errorf("imagestore: pulling %s: %w", ref, err)
	}
	img, err := desc.Image()
	if err != nil {
		return Image{}, fmt.Errorf("imagestore: pulling %s: %w", ref, err)
	}
	im, err := s.add(ctx, named{img: img, names: []string{ref}}, r.Name(), opts.ImportOptions)
	if err != nil {
		s.cleanAfter()
		return Image{}, err
	}
	return im, nil
}
