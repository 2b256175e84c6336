package image

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
}

// changes are the Dockerfile instructions applied at import.
var changes = []string{
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"WORKDIR " + sandboxWorkspace,
	`CMD ["sleep", "infinity"]`,
	"LABEL tenon.image=1",
}

// Build assembles the base image from the host's packages (DefaultPackages)
// and imports it into the engine as name. An existing image of that name is
// replaced (its tag moves to the new image).
func Build(ctx context.Context, cli Client, name string, log *slog.Logger) error {
	return BuildWith(ctx, cli, name, Config{}, log)
}

// BuildWith is Build with an explicit Config.
func BuildWith(ctx context.Context, cli Client, name string, cfg Config, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	plan, err := MakePlan(cfg)
	if err != nil {
		return fmt.Errorf("building image %s: %w", name, err)
	}
	log.Info("assembling image rootfs", "image", name, "packages", len(plan.Packages), "paths", plan.Len())
	pr, pw := io.Pipe()
	written := make(chan int64, 1)
	go func() {
		n, err := plan.WriteTar(pw)
		pw.CloseWithError(err)
		written <- n
	}()
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, name, image.ImportOptions{Changes: changes})
	if err != nil {
		pr.CloseWithError(err)
		<-written
		return fmt.Errorf("importing image %s: %w", name, err)
	}
	defer rc.Close()
	id, err := readImportResult(rc)
	pr.Close() // unblocks the writer if the engine stopped reading
	n := <-written
	if err != nil {
		return fmt.Errorf("importing image %s: %w", name, err)
	}
	log.Info("image built", "image", name, "id", id, "content", units.FormatSize(n),
		"duration", time.Since(start).Round(time.Millisecond))
	return nil
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

// Exists reports whether the engine has an image called name.
func Exists(ctx context.Context, cli Client, name string) (bool, error) {
	_, err := cli.ImageInspect(ctx, name)
	switch {
	case err == nil:
		return true, nil
	case client.IsErrNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("inspecting image %s: %w", name, err)
	}
}

// Require returns a *NotFoundError (naming 'tenon image build') when the
// engine has no image called name.
func Require(ctx context.Context, cli Client, name string) error {
	ok, err := Exists(ctx, cli, name)
	if err != nil {
		return err
	}
	if !ok {
		return &NotFoundError{Name: name}
	}
	return nil
}
