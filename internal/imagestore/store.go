package imagestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/fsutil"
)

// Image is one stored image.
type Image struct {
	// ID is the image's config digest, "sha256:<hex>".
	ID string `json:"id"`
	// Names are the references the image was imported or pulled under,
	// as given ("python:3.12", "registry.example/app:v1").
	Names []string `json:"names,omitempty"`
	// Layers are the image's layers, bottom first.
	Layers []Layer `json:"layers"`
	// Config is what the sandboxes of the image start from.
	Config Config `json:"config"`
	// OS and Architecture are the config's.
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	// Imported is when the record was written.
	Imported time.Time `json:"imported"`
	// Source says where the image came from (a file, a directory, a
	// registry reference).
	Source string `json:"source,omitempty"`
}

// Layer is one layer of an image.
type Layer struct {
	DiffID string `json:"diff_id"` // "sha256:<hex>" of the uncompressed tar
	Size   int64  `json:"size"`    // bytes of file content unpacked
}

// Config is the part of an image's config that applies to its sandboxes'
// actions.
type Config struct {
	Env        []string `json:"env,omitempty"`
	WorkingDir string   `json:"working_dir,omitempty"`
	User       string   `json:"user,omitempty"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
}

// Size is the bytes of file content of all the image's layers.
func (im Image) Size() int64 {
	var n int64
	for _, l := range im.Layers {
		n += l.Size
	}
	return n
}

// ShortID is the first 12 hex digits of the id.
func (im Image) ShortID() string {
	h := strings.TrimPrefix(im.ID, "sha256:")
	return h[:min(12, len(h))]
}

// Store is an image store rooted at one directory. Several processes may
// use the same root; changes are serialized by a file lock.
type Store struct {
	root    string
	holder  *holder
	holdErr error
}

// Open opens the store at root. A missing store reads as empty; its
// directories are made by the first change (an import, a hold, a GC), so
// a process that opens the store only in case a sandbox names an image
// (every live run does) leaves nothing behind when none does.
func Open(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	return &Store{root: abs}, nil
}

// ensure makes the store's directories (before any change).
func (s *Store) ensure() error {
	for _, d := range []string{s.root, s.layersDir(), s.imagesDir(), s.holdersDir(), s.tmpDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("imagestore: creating %s: %w", d, err)
		}
	}
	return nil
}

// Root is the store's directory.
func (s *Store) Root() string { return s.root }

func (s *Store) layersDir() string  { return filepath.Join(s.root, "layers") }
func (s *Store) imagesDir() string  { return filepath.Join(s.root, "images") }
func (s *Store) holdersDir() string { return filepath.Join(s.root, "holders") }
func (s *Store) tmpDir() string     { return filepath.Join(s.root, "tmp") }

// LayerDir is the unpacked directory of the layer with diff id d.
func (s *Store) LayerDir(d string) string {
	return filepath.Join(s.layersDir(), strings.TrimPrefix(d, "sha256:"))
}

// LowerDirs are the image's layer directories, top first (the order of
// overlayfs's lowerdir option).
func (s *Store) LowerDirs(im Image) []string {
	out := make([]string, 0, len(im.Layers))
	for _, l := range slices.Backward(im.Layers) {
		out = append(out, s.LayerDir(l.DiffID))
	}
	return out
}

// lock takes the store's exclusive lock; the returned function releases it.
func (s *Store) lock() (func(), error) {
	if err := s.ensure(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.root, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("imagestore: locking: %w", err)
	}
	return func() { f.Close() }, nil
}

// List returns every image, sorted by name (unnamed ones last, by id).
func (s *Store) List() ([]Image, error) {
	ents, err := os.ReadDir(s.imagesDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // not made yet: no image
	}
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	var out []Image
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		im, err := s.readImage(filepath.Join(s.imagesDir(), e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, im)
	}
	slices.SortFunc(out, func(a, b Image) int {
		an, bn := firstName(a), firstName(b)
		if (an == "") != (bn == "") {
			if an == "" {
				return 1
			}
			return -1
		}
		if c := strings.Compare(an, bn); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func firstName(im Image) string {
	if len(im.Names) == 0 {
		return ""
	}
	return im.Names[0]
}

func (s *Store) readImage(p string) (Image, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return Image{}, fmt.Errorf("imagestore: %w", err)
	}
	var im Image
	if err := json.Unmarshal(b, &im); err != nil {
		return Image{}, fmt.Errorf("imagestore: image record %s: %w", p, err)
	}
	return im, nil
}

func (s *Store) recordPath(id string) string {
	return filepath.Join(s.imagesDir(), strings.TrimPrefix(id, "sha256:")+".json")
}

// writeImage writes a record atomically (fsutil.WriteFile).
func (s *Store) writeImage(im Image) error {
	b, err := json.MarshalIndent(im, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(s.recordPath(im.ID), b)
}

// Get resolves ref: an image id ("sha256:<hex>", or a prefix of its hex
// of at least 12 digits), a name ("python:3.12"; "python" means
// "python:latest"; "docker.io/library/python:3.12" is the same name), or
// a name pinned to an id ("python:3.12@sha256:<hex>", which must match).
func (s *Store) Get(ref string) (Image, error) {
	all, err := s.List()
	if err != nil {
		return Image{}, err
	}
	return resolve(all, ref)
}

func writeFile(p string, b []byte) error {
	if err := fsutil.WriteFile(p, 0o600, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("imagestore: writing %s: %w", p, err)
	}
	return nil
}

// Find resolves ref (as Get) in the store at root without creating
// anything: a missing store has no image.
func Find(root, ref string) (Image, error) {
	if _, err := os.Stat(filepath.Join(root, "images")); errors.Is(err, os.ErrNotExist) {
		return Image{}, fmt.Errorf("%w: %s (no image store at %s; tenon image import or pull makes it)", ErrNotFound, ref, root)
	}
	return (&Store{root: root}).Get(ref)
}

func resolve(all []Image, ref string) (Image, error) {
	if n, id, ok := strings.Cut(ref, "@"); ok {
		im, err := resolve(all, id)
		if err != nil {
			return Image{}, err
		}
		if n != "" && !hasName(im, n) {
			return Image{}, fmt.Errorf("%w: %s (image %s is no longer named %s)", ErrNotFound, ref, im.ShortID(), n)
		}
		return im, nil
	}
	if h := strings.TrimPrefix(ref, "sha256:"); isHex(h) && (len(h) >= 12 || h != ref) {
		var found []Image
		for _, im := range all {
			if strings.HasPrefix(strings.TrimPrefix(im.ID, "sha256:"), h) {
				found = append(found, im)
			}
		}
		switch len(found) {
		case 1:
			return found[0], nil
		case 0:
			if h != ref {
				return Image{}, fmt.Errorf("%w: %s", ErrNotFound, ref)
			}
		default:
			return Image{}, fmt.Errorf("%w: %s", ErrAmbiguous, ref)
		}
	}
	for _, im := range all {
		if hasName(im, ref) {
			return im, nil
		}
	}
	return Image{}, fmt.Errorf("%w: %s (tenon image ls lists the images; tenon image import or pull adds one)", ErrNotFound, ref)
}

func isHex(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// canonical is the full form of a reference ("index.docker.io/library/
// python:3.12"), or ref itself when it does not parse.
func canonical(ref string) string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return ref
	}
	return r.Name()
}

func hasName(im Image, ref string) bool {
	c := canonical(ref)
	for _, n := range im.Names {
		if n == ref || canonical(n) == c {
			return true
		}
	}
	return false
}

// Pinned is the reference that names im for good: "<name>@sha256:<hex>"
// (just the id for an unnamed image). Get resolves it to im as long as
// im keeps the name, and fails once the name moved to another image.
func Pinned(name string, im Image) string {
	if name == "" || strings.HasPrefix(name, "sha256:") || strings.Contains(name, "@") {
		return im.ID
	}
	return name + "@" + im.ID
}

// Remove removes the image ref names. When ref is one of several names of
// an image only that name goes; otherwise the image goes, unless a live
// holder uses it (ErrInUse), and GC runs.
func (s *Store) Remove(ref string) (removed Image, untagged bool, err error) {
	unlock, err := s.lock()
	if err != nil {
		return Image{}, false, err
	}
	defer unlock()
	all, err := s.List()
	if err != nil {
		return Image{}, false, err
	}
	im, err := resolve(all, ref)
	if err != nil {
		return Image{}, false, err
	}
	if len(im.Names) > 1 && hasName(im, ref) && !strings.Contains(ref, "@") {
		c := canonical(ref)
		im.Names = slices.DeleteFunc(im.Names, func(n string) bool { return n == ref || canonical(n) == c })
		return im, true, s.writeImage(im)
	}
	hs, err := s.liveHolds()
	if err != nil {
		return Image{}, false, err
	}
	var users []string
	for _, h := range hs {
		for key, v := range h.Images {
			if v == im.ID {
				users = append(users, key)
			}
		}
	}
	if len(users) > 0 {
		slices.Sort(users)
		return Image{}, false, fmt.Errorf("%w: %s is used by %s", ErrInUse, ref, strings.Join(users, ", "))
	}
	if err := os.Remove(s.recordPath(im.ID)); err != nil {
		return Image{}, false, fmt.Errorf("imagestore: %w", err)
	}
	_, err = s.gcLocked(hs)
	return im, false, err
}

// GC removes the layers no image and no live holder references, and the
// temporary directories of dead holders. It returns the layers removed.
func (s *Store) GC() ([]string, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	hs, err := s.liveHolds()
	if err != nil {
		return nil, err
	}
	return s.gcLocked(hs)
}

func (s *Store) gcLocked(hs []holdFile) ([]string, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, im := range all {
		for _, l := range im.Layers {
			keep[strings.TrimPrefix(l.DiffID, "sha256:")] = true
		}
	}
	live := map[string]bool{}
	for _, h := range hs {
		live[h.name] = true
		for _, d := range h.Layers {
			keep[strings.TrimPrefix(d, "sha256:")] = true
		}
	}
	ents, err := os.ReadDir(s.layersDir())
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		if keep[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.layersDir(), e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "sha256:"+e.Name())
	}
	tmps, err := os.ReadDir(s.tmpDir())
	if err != nil {
		return removed, fmt.Errorf("imagestore: %w", err)
	}
	for _, e := range tmps {
		owner, _, _ := strings.Cut(e.Name(), ".")
		if live[owner] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.tmpDir(), e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("imagestore: garbage collection: %w", err)
	}
	return removed, nil
}
