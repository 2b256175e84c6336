package image

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"time"
)

// epoch is the modification time of synthesized entries, fixed so builds are reproducible.
var epoch = time.Unix(0, 0)

// WriteTar writes the plan as a tar stream (no compression): ownership
// root:root, host modes and mtimes, symlinks as links. It returns the bytes
// of file content written.
func (p *Plan) WriteTar(w io.Writer) (int64, error) {
	tw := tar.NewWriter(w)
	var total int64
	for _, e := range p.entries {
		n, err := writeEntry(tw, e)
		if err != nil {
			return total, fmt.Errorf("adding %s to the image: %w", e.name, err)
		}
		total += n
	}
	return total, tw.Close()
}

func writeEntry(tw *tar.Writer, e entry) (int64, error) {
	h := &tar.Header{Name: e.name, Mode: int64(e.mode.Perm()), ModTime: epoch, Format: tar.FormatPAX}
	if e.mode&os.ModeSticky != 0 {
		h.Mode |= 0o1000
	}
	if e.mode&os.ModeSetuid != 0 {
		h.Mode |= 0o4000
	}
	if e.mode&os.ModeSetgid != 0 {
		h.Mode |= 0o2000
	}
	var src *os.File
	switch {
	case e.link != "":
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
	case e.dir:
		h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
	case e.host != "":
		f, err := os.Open(e.host)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return 0, err
		}
		h.Typeflag, h.Size, h.ModTime, src = tar.TypeReg, fi.Size(), fi.ModTime(), f
	default:
		h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
	}
	if err := tw.WriteHeader(h); err != nil {
		return 0, err
	}
	switch {
	case src != nil:
		// A file that shrank since Stat fails here instead of corrupting the stream.
		n, err := io.CopyN(tw, src, h.Size)
		return n, err
	case h.Typeflag == tar.TypeReg:
		n, err := io.WriteString(tw, e.data)
		return int64(n), err
	}
	return 0, nil
}
