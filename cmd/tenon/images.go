package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "image import", summary: "add the images of a docker archive or an OCI layout to the image store", run: runImageImport})
	register(&command{name: "image pull", summary: "pull an image from a registry into the image store", run: runImagePull})
	register(&command{name: "image ls", summary: "list the image store's images", run: runImageLs})
	register(&command{name: "image rm", summary: "remove an image from the image store (refused while in use)", run: runImageRm})
	register(&command{name: "image gc", summary: "delete the image store's layers no image uses", run: runImageGC})
}

const storeDetails = `The image store is <state-dir>/images: each layer unpacked once (by its
diff id) and shared read-only, as overlay lower directories, by every
sandbox of the process backend that runs an image with it. Extraction
refuses absolute paths, "..", symlink escapes and device nodes, and drops
setuid/setgid bits (--keep-setuid keeps them; --skip-devices leaves device
nodes out instead of failing). A corrupt or truncated layer fails with its
digest named and leaves nothing behind.`

func storeFlags(fs *flag.FlagSet) *string {
	return fs.String("state-dir", "/var/lib/tenon", "state directory of tenon serve; the store is its images/ directory")
}

func layerFlags(fs *flag.FlagSet) func() archive.LayerOptions {
	keep := fs.Bool("keep-setuid", false, "keep setuid and setgid bits of the layers' files")
	skip := fs.Bool("skip-devices", false, "leave device nodes out instead of failing the import")
	return func() archive.LayerOptions { return archive.LayerOptions{KeepSetuid: *keep, SkipDevices: *skip} }
}

// progressOf prints one line per layer unpacked.
func progressOf(env *cliEnv) func(string, bool) {
	var start time.Time
	return func(d string, done bool) {
		short := strings.TrimPrefix(d, "sha256:")[:12]
		if !done {
			start = time.Now()
			return
		}
		fmt.Fprintf(env.stderr, "layer %s unpacked in %v\n", short, time.Since(start).Round(time.Millisecond))
	}
}

func runImageImport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "image import", "FILE|DIR",
		"Add the images of a `docker save` archive, an OCI image layout directory or a tar of one.",
		storeDetails+`

The images keep the names their source gives (RepoTags, ref.name
annotations) unless --name names the (single) image.`)
	state := storeFlags(fs)
	nameFlag := fs.String("name", "", "name of the imported image")
	layer := layerFlags(fs)
	s, err := oneArgStore(env, fs, args, "image import", "FILE or DIR", state)
	if err != nil {
		return err
	}
	defer s.Close()
	ims, err := s.Import(ctx, fs.Arg(0), imagestore.ImportOptions{Name: *nameFlag, Layer: layer(), Progress: progressOf(env)})
	if err != nil {
		return err
	}
	for _, im := range ims {
		printImage(env.stdout, im)
	}
	return nil
}

func runImagePull(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "image pull", "REF",
		"Pull an image (linux, this machine's architecture) from its registry into the image store.",
		storeDetails+`

Credentials come from the Docker config (~/.docker/config.json) when it
has some. Registries on loopback and private addresses are spoken to over
plain HTTP; --insecure allows it for any.`)
	state := storeFlags(fs)
	insecure := fs.Bool("insecure", false, "allow plain HTTP to the registry")
	layer := layerFlags(fs)
	s, err := oneArgStore(env, fs, args, "image pull", "REF", state)
	if err != nil {
		return err
	}
	defer s.Close()
	im, err := s.Pull(ctx, fs.Arg(0), imagestore.PullOptions{Insecure: *insecure,
		ImportOptions: imagestore.ImportOptions{Layer: layer(), Progress: progressOf(env)}})
	if err != nil {
		return err
	}
	printImage(env.stdout, im)
	return nil
}

// oneArgStore parses a store command's flags and its one positional
// argument (what names it in the usage error) and opens the image store.
func oneArgStore(env *cliEnv, fs *flag.FlagSet, args []string, cmd, what string, state *string) (*imagestore.Store, error) {
	if err := parseFlagsArgs(env, fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(env.stderr, "tenon %s: want one %s\n", cmd, what)
		return nil, errUsage
	}
	return app.OpenImageStore(*state)
}

// printImage is import's and pull's line for an image added to the store.
func printImage(w io.Writer, im imagestore.Image) {
	fmt.Fprintf(w, "%s\t%s\t%d layers\t%s\n", displayName(im), im.ShortID(), len(im.Layers), units.FormatSize(im.Size()))
}

func displayName(im imagestore.Image) string {
	if len(im.Names) == 0 {
		return "<none>"
	}
	return strings.Join(im.Names, ",")
}

func runImageLs(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "image ls", "", "List the image store's images.", storeDetails)
	state := storeFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	s, err := app.OpenImageStore(*state)
	if err != nil {
		return err
	}
	defer s.Close()
	ims, err := s.List()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ims)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tLAYERS\tSIZE\tIMPORTED")
	for _, im := range ims {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", displayName(im), im.ShortID(), len(im.Layers),
			units.FormatSize(im.Size()), im.Imported.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

func runImageRm(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "image rm", "NAME|ID...",
		"Remove images (or one name of an image that has several) from the image store.",
		storeDetails+`

An image a live sandbox or agent uses (of a running tenon serve, say) is
not removed. Layers no image uses any more are deleted.`)
	state := storeFlags(fs)
	if err := parseFlagsArgs(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(env.stderr, "tenon image rm: want at least one NAME or ID")
		return errUsage
	}
	s, err := app.OpenImageStore(*state)
	if err != nil {
		return err
	}
	defer s.Close()
	var errs []error
	for _, ref := range fs.Args() {
		im, untagged, err := s.Remove(ref)
		switch {
		case err != nil:
			errs = append(errs, err)
		case untagged:
			fmt.Fprintf(env.stdout, "untagged %s (image %s keeps %s)\n", ref, im.ShortID(), strings.Join(im.Names, ","))
		default:
			fmt.Fprintf(env.stdout, "removed %s (%s)\n", ref, im.ShortID())
		}
	}
	return errors.Join(errs...)
}

func runImageGC(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "image gc", "",
		"Delete the layers no image and no running import uses, and what crashed imports left.",
		storeDetails+`

tenon image rm does this after every removal; gc is for what a crash or a
failed import left.`)
	state := storeFlags(fs)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	s, err := app.OpenImageStore(*state)
	if err != nil {
		return err
	}
	defer s.Close()
	removed, err := s.GC()
	fmt.Fprintf(env.stdout, "%d layers removed\n", len(removed))
	return err
}
