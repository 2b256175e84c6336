package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "image build", summary: "build the docker backend's base image offline from the host's packages", run: runImageBuild})
}

func runImageBuild(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "image build", "",
		"Build the base image of the docker backend offline, from the host's installed packages.",
		`The root filesystem is assembled from the host's installed Debian packages
(no network, no registry) and imported into dockerd under --name, replacing
an image of that name (removed unless a container still uses it). A build is
skipped when the image was built from the same packages and files (label
`+image.LabelFingerprint+`); --force imports anyway. dockerd must be
running (DOCKER_HOST selects it).`)
	name := fs.String("name", image.DefaultName, "image name")
	force := fs.Bool("force", false, "import even when the image is up to date")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	cli, err := docker.NewClient()
	if err != nil {
		return fmt.Errorf("docker client: %w", err)
	}
	defer cli.Close()
	if err := docker.Ping(ctx, cli); err != nil {
		return err
	}
	start := time.Now()
	res, err := image.BuildWith(ctx, cli, *name, image.Config{Force: *force}, env.log)
	if err != nil {
		return err
	}
	elapsed := time.Since(start).Round(time.Millisecond)
	what := fmt.Sprintf("built in %v", elapsed)
	if res.UpToDate {
		what = fmt.Sprintf("up to date (checked in %v; --force rebuilds)", elapsed)
	}
	in, err := cli.ImageInspect(ctx, *name)
	if err != nil {
		return fmt.Errorf("inspecting built image %s: %w", *name, err)
	}
	fmt.Fprintf(env.stdout, "%s\t%s\t%s\t%s\n", *name, shortID(in.ID), units.FormatSize(in.Size), what)
	return nil
}

// shortID trims a "sha256:" image id to its first 12 hex digits.
func shortID(id string) string {
	if len(id) > 7 && id[:7] == "sha256:" {
		id = id[7:]
	}
	return id[:min(len(id), 12)]
}
