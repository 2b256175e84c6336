package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// ImageSource holds images the engine may lack: the process backend's
// image store (*imagestore.Store, filled by `tenon image import`, `tenon
// image pull` and `tenon image build`), so that both backends accept the
// same image names.
type ImageSource interface {
	// WriteDockerArchive writes the image ref names as a `docker save`
	// archive tagged tag.
	WriteDockerArchive(ref, tag string, w io.Writer) error
}

// imageLoader is the engine call that loads an archive (*client.Client
// has it).
type imageLoader interface {
	ImageLoad(ctx context.Context, input io.Reader, opts ...client.ImageLoadOption) (image.LoadResponse, error)
}

// errNoImageSource means the engine lacks an image and the backend has
// nowhere else to find it.
var errNoImageSource = errors.New("not in the engine, and no image store to load it from")

// loadImported loads the image ref from Config.Images into the engine,
// tagged ref, unless the engine has it by now (loads are serialized).
func (b *Backend) loadImported(ctx context.Context, ref string) error {
	loader, ok := b.cli.(imageLoader)
	if b.cfg.Images == nil || !ok {
		return errNoImageSource
	}
	b.loadMu.Lock()
	defer b.loadMu.Unlock()
	if _, err := b.cli.ImageInspect(ctx, ref); err == nil {
		return nil
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(b.cfg.Images.WriteDockerArchive(ref, ref, pw)) }()
	resp, err := loader.ImageLoad(ctx, pr, client.ImageLoadWithQuiet(true))
	if err != nil {
		pr.CloseWithError(err)
		return daemonErr(b.cli, fmt.Errorf("loading imported image %s: %w", ref, err))
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	pr.Close()
	if err != nil {
		return fmt.Errorf("loading imported image %s: %w", ref, err)
	}
	if bytes.Contains(body, []byte(`"errorDetail"`)) {
		return fmt.Errorf("loading imported image %s: %s", ref, bytes.TrimSpace(body))
	}
	if _, err := b.cli.ImageInspect(ctx, ref); err != nil {
		return fmt.Errorf("imported image %s not in the engine after loading it: %w", ref, err)
	}
	b.cfg.Log.Info("loaded an imported image into the engine", "image", ref)
	return nil
}
