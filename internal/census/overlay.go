package census

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// overlayMount is an overlayfs mount a sibling's process sees: a sandbox of
// an image (its layers are the lower directories, shared read-only by every
// sandbox of the image) or any other overlay. A file mapped through it
// has the overlay's device and inode, different in every sibling, while
// its pages are the page cache of the layer file below: the census keys
// such a file by that layer file (realPath), so that N siblings reading
// one image's files count its pages once.
type overlayMount struct {
	dev    uint64
	point  string   // mount point, in the process's mount namespace
	root   string   // the mount's root within the overlay ("/" unless a bind of part of it)
	layers []string // host paths, top first: the upper directory (if any), then the lower ones
	lowers []string
}

// overlayMounts picks the overlays of a mount table whose layers are all
// absolute paths (the host's paths, as the process backend mounts them in
// the host's mount namespace; relative ones, as Docker's overlay2 uses when
// the options grow long, cannot be resolved from here).
func overlayMounts(ms []procfs.Mount) []overlayMount {
	var out []overlayMount
	for _, m := range ms {
		if m.FSType != "overlay" {
			continue
		}
		lower, ok := m.Option("lowerdir")
		if !ok {
			continue
		}
		o := overlayMount{dev: m.Dev, point: m.MountPoint, root: m.Root}
		for _, l := range strings.Split(lower, ":") {
			if l != "" { // "::" separates data-only lower layers
				o.lowers = append(o.lowers, l)
			}
		}
		if up, ok := m.Option("upperdir"); ok {
			o.layers = append(o.layers, up)
		}
		o.layers = append(o.layers, o.lowers...)
		if len(o.lowers) == 0 || !allAbs(o.layers) {
			continue
		}
		out = append(out, o)
	}
	return out
}

func allAbs(ps []string) bool {
	for _, p := range ps {
		if !filepath.IsAbs(p) {
			return false
		}
	}
	return true
}

// realPath is the layer file behind p (a path of the process's mount
// namespace under o's mount point): the topmost layer's entry at that
// path when it is a regular file, "" otherwise (a whiteout, a path outside
// the mount, nothing there any more).
func (o overlayMount) realPath(p string) string {
	rel, ok := strings.CutPrefix(p, o.point)
	if !ok || (rel != "" && rel[0] != '/' && o.point != "/") {
		return ""
	}
	rel = path.Join("/", o.root, rel)
	for _, l := range o.layers {
		fi, err := os.Lstat(filepath.Join(l, rel))
		if err != nil {
			continue
		}
		if fi.Mode().IsRegular() {
			return filepath.Join(l, rel)
		}
		return ""
	}
	return ""
}

// overlayOf is the overlay of dev among ovs, if any.
func overlayOf(ovs []overlayMount, dev uint64) (overlayMount, bool) {
	for _, o := range ovs {
		if o.dev == dev {
			return o, true
		}
	}
	return overlayMount{}, false
}
