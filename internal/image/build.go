package image

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/units"
)

// Client is the part of the Docker engine API the package uses;
// *client.Client implements it.
type Client interface {
	ImageImport(ctx context.Context, source image.ImportSource, ref string, options image.ImportOptions) (io.ReadCloser, error)
	ImageInspect(ctx context.Context, imageID string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImageRemove(ctx context.Context, imageID string, options image.RemoveOptions) ([]image.DeleteResponse, error)
}

// pathEnv and idleCmd are the image's PATH and command (a container that
// idles until tenon execs actions in it).
const pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

var idleCmd = []string{"sleep", "infinity"}

// changes are the Dockerfile instructions applied at import (Plan.Image's
// config says the same).
var changes = []string{
	"ENV " + pathEnv,
	"WORKDIR " + sandboxWorkspace,
	`CMD ["` + strings.Join(idleCmd, `", "`) + `"]`,
	"LABEL tenon.image=1",
}

// Result says what a build did.
type Result struct {
	ID          string // the image id name refers to
	Fingerprint string // the plan's fingerprint (label LabelFingerprint)
	UpToDate    bool   // the existing image had the same fingerprint: nothing was imported
	Removed     string // the id of the image name referred to before, removed; "" if none
}

// BuildWith assembles the base image from the host's packages
// (cfg.Packages, DefaultPackages when empty) and imports it into the engine
// as name, unless an image of that name was built from the same plan (see
// Plan.Fingerprint) and cfg.Force is unset. An existing image of that name
// is replaced (its tag moves to the new image) and removed unless a
// container still uses it.
func BuildWith(ctx context.Context, cli Client, name string, cfg Config, log *slog.Logger) (Result, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	plan, err := MakePlan(cfg)
	if err != nil {
		return Result{}, fmt.Errorf("building image %s: %w", name, err)
	}
	fp, err := plan.Fingerprint()
	if err != nil {
		return Result{}, fmt.Errorf("building image %s: %w", name, err)
	}
	res := Result{Fingerprint: fp}
	old, err := cli.ImageInspect(ctx, name)
	switch {
	case client.IsErrNotFound(err):
	case err != nil:
		return Result{}, fmt.Errorf("inspecting image %s: %w", name, err)
	case !cfg.Force && old.Config != nil && old.Config.Labels[LabelFingerprint] == fp:
		log.Info("image up to date", "image", name, "id", old.ID)
		res.ID, res.UpToDate = old.ID, true
		return res, nil
	}
	log.Info("assembling image rootfs", "image", name, "packages", len(plan.Packages), "paths", plan.Len())
	pr, pw := io.Pipe()
	written := make(chan int64, 1)
	go func() {
		n, err := plan.WriteTar(pw)
		pw.CloseWithError(err)
		written <- n
	}()
	opts := image.ImportOptions{Changes: append(slices.Clone(changes), "LABEL "+LabelFingerprint+"="+fp)}
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, name, opts)
	if err != nil {
		pr.CloseWithError(err)
		<-written
		return Result{}, fmt.Errorf("importing image %s: %w", name, err)
	}
	defer rc.Close()
	id, err := readImportResult(rc)
	pr.Close() // unblocks the writer if the engine stopped reading
	n := <-written
	if err != nil {
		return Result{}, fmt.Errorf("importing image %s: %w", name, err)
	}
	res.ID = id
	log.Info("image built", "image", name, "id", id, "content", units.FormatSize(n),
		"duration", time.Since(start).Round(time.Millisecond))
	if old.ID != "" && old.ID != id {
		// The old image lost its tag; remove it unless a container uses it.
		if _, err := cli.ImageRemove(ctx, old.ID, image.RemoveOptions{PruneChildren: true}); err != nil {
			log.Info("previous image kept", "id", old.ID, "err", err)
		} else {
			res.Removed = old.ID
		}
	}
	return res, nil
}

// readImportResult reads the engine's JSON message stream of an import and
// returns the new image id, or the error the engine reported.
func readImportResult(r io.Reader) (string, error) {
	dec := json.NewDecoder(r)
	var id string
	for {
		var m struct {
			Status      string `json:"status"`
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("reading engine response: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return "", errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return "", errors.New(m.Error)
		}
		if m.Status != "" {
			id = m.Status
		}
	}
	if id == "" {
		return "", errors.New("the engine reported no image id")
	}
	return id, nil
}
