package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/tenon-dev/tenon/internal/imagestore"
)

// BuildInto makes cfg's plan and adds it to the image store s as one
// layer (Plan.Image), named opts.Name: what tenon image build does. It
// returns the image and the plan (what went in).
func BuildInto(ctx context.Context, s *imagestore.Store, cfg Config, opts imagestore.ImportOptions) (imagestore.Image, *Plan, error) {
	plan, err := MakePlan(cfg)
	if err != nil {
		return imagestore.Image{}, nil, err
	}
	img, err := plan.Image()
	if err != nil {
		return imagestore.Image{}, plan, err
	}
	source := fmt.Sprintf("tenon image build: %d host packages (closure of %s)", len(plan.Packages),
		strings.Join(cfg.withDefaults().Packages, ","))
	im, err := s.Add(ctx, img, source, opts)
	return im, plan, err
}

// Image is the plan as a one-layer image for the process backend's image
// store (imagestore.Store.Add): its layer is WriteTar's stream, its config
// the one the docker build's changes give (PATH, working directory, the
// fingerprint label). The layer's diff id is computed here, by writing the
// stream once into a hash; the store writes it again as it unpacks it and
// checks it against that id, so a host file that changed in between fails
// the build instead of making an image whose id lies. Nothing is
// compressed: the image is unpacked, never pushed.
func (p *Plan) Image() (v1.Image, error) {
	fp, err := p.Fingerprint()
	if err != nil {
		return nil, err
	}
	sum := sha256.New()
	if _, err := p.WriteTar(sum); err != nil {
		return nil, err
	}
	diffID := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum.Sum(nil))}
	cf := v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      v1.Time{Time: epoch.UTC()},
		RootFS:       v1.RootFS{Type: "layers", DiffIDs: []v1.Hash{diffID}},
		Config: v1.Config{
			Env:        []string{pathEnv},
			WorkingDir: sandboxWorkspace,
			Cmd:        idleCmd,
			Labels:     map[string]string{"tenon.image": "1", LabelFingerprint: fp},
		},
	}
	raw, err := json.Marshal(cf)
	if err != nil {
		return nil, err
	}
	return partial.UncompressedToImage(&planImage{raw: raw, layer: &planLayer{plan: p, diffID: diffID}})
}

// planImage is the partial.UncompressedImageCore of Plan.Image.
type planImage struct {
	raw   []byte
	layer *planLayer
}

func (i *planImage) RawConfigFile() ([]byte, error) { return i.raw, nil }

func (i *planImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func (i *planImage) LayerByDiffID(h v1.Hash) (partial.UncompressedLayer, error) {
	if h != i.layer.diffID {
		return nil, fmt.Errorf("image: no layer %s", h)
	}
	return i.layer, nil
}

// planLayer is the plan's tar stream as a partial.UncompressedLayer.
type planLayer struct {
	plan   *Plan
	diffID v1.Hash
}

func (l *planLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }

func (l *planLayer) MediaType() (types.MediaType, error) { return types.OCIUncompressedLayer, nil }

// Uncompressed writes the tar stream anew; closing the reader early stops
// the writer.
func (l *planLayer) Uncompressed() (io.ReadCloser, error) {
	pr, pw := io.Pipe()
	go func() {
		_, err := l.plan.WriteTar(pw)
		pw.CloseWithError(err)
	}()
	return pr, nil
}
