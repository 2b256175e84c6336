package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/realtools"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "image build", summary: "build an image offline from the host's installed Debian packages (image store, or dockerd with --docker)", run: runImageBuild})
}

func runImageBuild(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "image build", "",
		"Build an image offline, from the host's installed Debian packages.",
		`The root filesystem is the files of the host's installed Debian packages
(no network, no registry): a shell and the core tools (`+strings.Join(image.DefaultPackages, ", ")+`),
the packages of --packages and of --manifest's debian_packages (a real-tools
manifest.json, tenon workload real), and the dependency closure of all of
them, from the dpkg database; documentation, locales and secrets are left
out, and a minimal /etc/passwd and /etc/group are written. A package that is
not installed fails the build, naming it.

By default the image goes into the image store of --state-dir, as one layer
(named --name; tenon image ls lists it), with the host's compiled Python
bytecode of its modules and what the process backend's host image shows in
/etc (the dynamic linker's cache, CA certificates, time zone): sandboxes
and workflows run in it with "image": NAME, or --image NAME of tenon replay,
tenon bench and tenon workload real.

--docker imports it into dockerd instead, as the docker backend's base image
(--name `+image.DefaultName+`), replacing an image of that name (removed
unless a container still uses it). That build is skipped when the image was
built from the same packages and files (label `+image.LabelFingerprint+`);
--force imports anyway. dockerd must be running (DOCKER_HOST selects it).`)
	name := fs.String("name", image.DefaultName, "image name")
	var packages listFlag
	fs.Var(&packages, "packages", "comma-separated Debian `packages` to add to the base set")
	manifest := fs.String("manifest", "", "add the debian_packages of this real-tools manifest.json `file`")
	state := storeFlags(fs)
	layer := layerFlags(fs)
	toDocker := fs.Bool("docker", false, "import into dockerd as the docker backend's base image instead of the image store")
	force := fs.Bool("force", false, "with --docker: import even when the image is up to date")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	extra := packages.items
	if *manifest != "" {
		m, err := realtools.LoadManifest(*manifest)
		if err != nil {
			return fmt.Errorf("--manifest: %w", err)
		}
		if len(m.DebianPackages) == 0 {
			return fmt.Errorf("--manifest %s: it lists no debian_packages", *manifest)
		}
		extra = append(extra, m.DebianPackages...)
	}
	cfg := image.StoreConfig(extra)
	if *toDocker {
		cfg = image.Config{Packages: cfg.Packages, Force: *force}
		return buildDockerImage(ctx, env, *name, cfg)
	}
	if *force {
		return errors.New("--force applies to --docker builds; a store build never skips (a layer already unpacked is not unpacked again)")
	}
	s, err := app.OpenImageStore(*state)
	if err != nil {
		return err
	}
	defer s.Close()
	start := time.Now()
	im, plan, err := image.BuildInto(ctx, s, cfg, imagestore.ImportOptions{Name: *name, Layer: layer(), Progress: progressOf(env)})
	if err != nil {
		return fmt.Errorf("building image %s: %w", *name, err)
	}
	fmt.Fprintf(env.stderr, "%d packages, %d paths, built in %v\n", len(plan.Packages), plan.Len(), time.Since(start).Round(time.Millisecond))
	printImage(env.stdout, im)
	return nil
}

// buildDockerImage is tenon image build --docker.
func buildDockerImage(ctx context.Context, env *cliEnv, name string, cfg image.Config) error {
	cli, err := docker.NewClient()
	if err != nil {
		return fmt.Errorf("docker client: %w", err)
	}
	defer cli.Close()
	if err := docker.Ping(ctx, cli); err != nil {
		return err
	}
	start := time.Now()
	res, err := image.BuildWith(ctx, cli, name, cfg, env.log)
	if err != nil {
		return err
	}
	elapsed := time.Since(start).Round(time.Millisecond)
	what := fmt.Sprintf("built in %v", elapsed)
	if res.UpToDate {
		what = fmt.Sprintf("up to date (checked in %v; --force rebuilds)", elapsed)
	}
	in, err := cli.ImageInspect(ctx, name)
	if err != nil {
		return fmt.Errorf("inspecting built image %s: %w", name, err)
	}
	fmt.Fprintf(env.stdout, "%s\t%s\t%s\t%s\n", name, shortID(in.ID), units.FormatSize(in.Size), what)
	return nil
}

// shortID trims a "sha256:" image id to its first 12 hex digits.
func shortID(id string) string {
	if len(id) > 7 && id[:7] == "sha256:" {
		id = id[7:]
	}
	return id[:min(len(id), 12)]
}
