package imagestore

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/archive"
)

// ImportOptions configure Import and Pull.
type ImportOptions struct {
	// Name names the image instead of the names the source gives (a
	// docker archive's RepoTags, an OCI layout's ref.name annotations, the
	// pulled reference). With several images in the source it is refused.
	Name string
	// Layer loosens the extraction checks (setuid bits kept, device nodes
	// skipped).
	Layer archive.LayerOptions
	// Progress, when set, is told each layer as it is unpacked (done
	// false) and when it is in place (done true).
	Progress func(diffID string, done bool)
}

// named is an image of a source with the names the source gives it.
type named struct {
	img   v1.Image
	names []string
}

// Import adds the images of src: a `docker save` archive, an OCI image
// layout directory, or a tar of one. It returns the images added (or
// found already there, their names updated).
func (s *Store) Import(ctx context.Context, src string, opts ImportOptions) ([]Image, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	if err := s.ensure(); err != nil {
		return nil, err
	}
	var imgs []named
	if fi.IsDir() {
		imgs, err = layoutImages(src)
	} else {
		var kind string
		if kind, err = sniffTar(src); err == nil {
			switch kind {
			case "docker":
				imgs, err = dockerArchiveImages(src)
			case "oci":
				var dir string
				if dir, err = s.untarLayout(ctx, src); err == nil {
					defer os.RemoveAll(filepath.Dir(dir))
					imgs, err = layoutImages(dir)
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("imagestore: importing %s: %w", src, err)
	}
	if len(imgs) == 0 {
		return nil, fmt.Errorf("imagestore: importing %s: %w: no linux/%s image in it", src, ErrUnsupported, runtime.GOARCH)
	}
	if opts.Name != "" && len(imgs) > 1 {
		return nil, fmt.Errorf("imagestore: importing %s: it holds %d images; name them in the source instead of one name for all", src, len(imgs))
	}
	abs, _ := filepath.Abs(src)
	var out []Image
	for _, n := range imgs {
		im, err := s.add(ctx, n, abs, opts)
		if err != nil {
			s.cleanAfter()
			return out, err
		}
		out = append(out, im)
	}
	return out, nil
}

// Add adds img, an image made in this process (tenon image build: the
// host's packages as one layer), named opts.Name (unnamed when ""), its
// layers unpacked as Import's are; source says where it came from.
func (s *Store) Add(ctx context.Context, img v1.Image, source string, opts ImportOptions) (Image, error) {
	im, err := s.add(ctx, named{img: img}, source, opts)
	if err != nil {
		s.cleanAfter()
	}
	return im, err
}

// sniffTar tells a docker archive (manifest.json) from a tar of an OCI
// layout (oci-layout and index.json); "docker" wins when both are there,
// as in the archives of Docker 25 and later.
func sniffTar(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%w: not a tar archive (%v)", ErrUnsupported, err)
		}
		seen[strings.TrimPrefix(h.Name, "./")] = true
	}
	switch {
	case seen["manifest.json"]:
		return "docker", nil
	case seen["oci-layout"] && seen["index.json"]:
		return "oci", nil
	}
	return "", fmt.Errorf("%w: neither a docker archive (manifest.json) nor an OCI layout (oci-layout, index.json)", ErrUnsupported)
}

func dockerArchiveImages(p string) ([]named, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(p) }
	m, err := tarball.LoadManifest(opener)
	if err != nil {
		return nil, err
	}
	var out []named
	for i, d := range m {
		var tag *name.Tag
		if len(d.RepoTags) > 0 {
			t, err := name.NewTag(d.RepoTags[0], name.WeakValidation)
			if err != nil {
				return nil, err
			}
			tag = &t
		} else if len(m) > 1 {
			return nil, fmt.Errorf("image %d of %d has no tag: save the images with names", i+1, len(m))
		}
		img, err := tarball.Image(opener, tag)
		if err != nil {
			return nil, err
		}
		out = append(out, named{img: img, names: slices.Clone(d.RepoTags)})
	}
	return out, nil
}

// layoutImages reads an OCI layout's images, picking linux/GOARCH from
// multi-platform indexes.
func layoutImages(dir string) ([]named, error) {
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	return indexImages(ii, nil)
}

func indexImages(ii v1.ImageIndex, names []string) ([]named, error) {
	im, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	multi := len(im.Manifests) > 1
	var out []named
	for _, d := range im.Manifests {
		ns := names
		if n := refName(d.Annotations); n != "" {
			ns = []string{n}
		}
		switch {
		case d.MediaType.IsIndex():
			child, err := ii.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			imgs, err := indexImages(child, ns)
			if err != nil {
				return nil, err
			}
			out = append(out, imgs...)
		case d.MediaType.IsImage():
			if multi && d.Platform != nil && !ours(*d.Platform) {
				continue
			}
			img, err := ii.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			out = append(out, named{img: img, names: ns})
		}
	}
	return out, nil
}

// refName is the image name an OCI layout's descriptor annotations give:
// containerd's full name, else the OCI ref.name when it is more than a tag.
func refName(a map[string]string) string {
	if n := a["io.containerd.image.name"]; n != "" {
		return n
	}
	n := a["org.opencontainers.image.ref.name"]
	if strings.ContainsAny(n, ":/") {
		return n
	}
	return ""
}

func ours(p v1.Platform) bool {
	return (p.OS == "" || p.OS == "linux") && (p.Architecture == "" || p.Architecture == runtime.GOARCH)
}

// untarLayout extracts an OCI layout tar into a temporary directory and
// returns it (its parent is the caller's to remove).
func (s *Store) untarLayout(ctx context.Context, p string) (string, error) {
	h, err := s.ownHolder()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(s.tmpDir(), h.name+".")
	if err != nil {
		return "", err
	}
	f, err := os.Open(p)
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	defer f.Close()
	dir := filepath.Join(tmp, "layout")
	if _, err := archive.ExtractLayer(ctx, f, dir, archive.LayerOptions{Plain: true}); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return dir, nil
}

// add unpacks img's missing layers and writes its record, giving it names
// (taken from any other image that had them).
func (s *Store) add(ctx context.Context, n named, source string, opts ImportOptions) (Image, error) {
	if err := s.ensure(); err != nil {
		return Image{}, err
	}
	id, err := n.img.ConfigName()
	if err != nil {
		return Image{}, fmt.Errorf("imagestore: reading image config: %w", err)
	}
	cf, err := n.img.ConfigFile()
	if err != nil {
		return Image{}, fmt.Errorf("imagestore: reading image config %s: %w", id, err)
	}
	if (cf.OS != "" && cf.OS != "linux") || (cf.Architecture != "" && cf.Architecture != runtime.GOARCH) {
		return Image{}, fmt.Errorf("imagestore: image %s is %s/%s: %w on linux/%s", id, cf.OS, cf.Architecture, ErrUnsupported, runtime.GOARCH)
	}
	layers, err := n.img.Layers()
	if err != nil {
		return Image{}, fmt.Errorf("imagestore: image %s: %w", id, err)
	}
	if len(layers) != len(cf.RootFS.DiffIDs) {
		return Image{}, fmt.Errorf("imagestore: image %s: %d layers but %d diff ids in its config", id, len(layers), len(cf.RootFS.DiffIDs))
	}
	names := n.names
	if opts.Name != "" {
		names = []string{opts.Name}
	}
	im := Image{
		ID: id.String(), Names: names, OS: cf.OS, Architecture: cf.Architecture, Source: source,
		Config: Config{
			Env: cf.Config.Env, WorkingDir: cf.Config.WorkingDir, User: cf.Config.User,
			Entrypoint: cf.Config.Entrypoint, Cmd: cf.Config.Cmd,
		},
	}
	var ids []string
	for _, d := range cf.RootFS.DiffIDs {
		ids = append(ids, d.String())
	}
	// Held from the first layer unpacked until the record is written, so
	// no GC (here or in another process) takes them meanwhile.
	if err := s.holdLayers(ids, true); err != nil {
		return Image{}, err
	}
	defer s.holdLayers(ids, false)
	for i, l := range layers {
		d := cf.RootFS.DiffIDs[i]
		size, err := s.unpack(ctx, l, d, opts)
		if err != nil {
			return Image{}, err
		}
		im.Layers = append(im.Layers, Layer{DiffID: d.String(), Size: size})
	}
	unlock, err := s.lock()
	if err != nil {
		return Image{}, err
	}
	defer unlock()
	all, err := s.List()
	if err != nil {
		return Image{}, err
	}
	for _, o := range all {
		if o.ID == im.ID {
			for _, n := range o.Names {
				if !hasName(im, n) {
					im.Names = append(im.Names, n)
				}
			}
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(o.Names), func(n string) bool { return hasName(im, n) })
		if len(kept) != len(o.Names) {
			o.Names = kept
			if err := s.writeImage(o); err != nil {
				return Image{}, err
			}
		}
	}
	im.Imported = time.Now().UTC()
	return im, s.writeImage(im)
}

// cleanAfter removes, after a failed import, the layers it unpacked that
// no image references (best effort: a later GC does it too).
func (s *Store) cleanAfter() { _, _ = s.GC() }

// unpack puts layer l (diff id d) in place unless it is there already and
// returns its content size.
func (s *Store) unpack(ctx context.Context, l v1.Layer, d v1.Hash, opts ImportOptions) (int64, error) {
	dst := s.LayerDir(d.String())
	if _, err := os.Lstat(dst); err == nil {
		return s.layerSize(d.String())
	}
	if opts.Progress != nil {
		opts.Progress(d.String(), false)
	}
	h, err := s.ownHolder()
	if err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp(s.tmpDir(), h.name+".")
	if err != nil {
		return 0, fmt.Errorf("imagestore: %w", err)
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	st, err := extractChecked(ctx, l, d, tree, opts.Layer)
	if err != nil {
		return 0, fmt.Errorf("imagestore: layer %s: %w", d, err)
	}
	if err := syncfs(tree); err != nil {
		return 0, fmt.Errorf("imagestore: layer %s: %w", d, err)
	}
	dropCache(tree)
	if err := os.Rename(tree, dst); err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, unix.ENOTEMPTY) {
		return 0, fmt.Errorf("imagestore: layer %s: %w", d, err)
	}
	if opts.Progress != nil {
		opts.Progress(d.String(), true)
	}
	return st.Bytes, nil
}

// extractChecked extracts l's uncompressed stream into dir, checking that
// the whole stream hashes to d.
func extractChecked(ctx context.Context, l v1.Layer, d v1.Hash, dir string, opts archive.LayerOptions) (archive.LayerStats, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return archive.LayerStats{}, err
	}
	defer rc.Close()
	sum := sha256.New()
	tr := io.TeeReader(rc, sum)
	st, err := archive.ExtractLayer(ctx, tr, dir, opts)
	if err == nil {
		_, err = io.Copy(io.Discard, tr)
	}
	if err == nil {
		err = rc.Close()
	}
	if err != nil {
		return st, err
	}
	if got := "sha256:" + hex.EncodeToString(sum.Sum(nil)); got != d.String() {
		return st, fmt.Errorf("%w: its content hashes to %s", ErrCorrupt, got)
	}
	return st, nil
}

func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// dropCache drops the (clean, once synced) page cache of a layer's files,
// which the unpacking charged to the importing process's memory cgroup:
// the sandboxes that read the files are charged instead, the first one
// for all of them (best effort).
func dropCache(dir string) {
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
		return nil
	})
}

// layerSize is the content size of a stored layer: from a record that
// has it, else counted.
func (s *Store) layerSize(d string) (int64, error) {
	all, err := s.List()
	if err != nil {
		return 0, err
	}
	for _, im := range all {
		for _, l := range im.Layers {
			if l.DiffID == d {
				return l.Size, nil
			}
		}
	}
	var n int64
	err = filepath.WalkDir(s.LayerDir(d), func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			fi, err := e.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
