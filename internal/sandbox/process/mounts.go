//go:build linux

package process

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// mountPointsUnder returns the mount points of a mountinfo file that are dir
// or below it, deepest first.
func mountPointsUnder(r io.Reader, dir string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		mp := procfs.Unescape(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return out, nil
}

// unmountUnder detaches every mount at or below dir in the host's mount
// namespace. The backend makes none there; this guards RemoveAll against
// descending into a mount somebody else made.
func unmountUnder(mountinfo, dir string) error {
	f, err := os.Open(mountinfo)
	if err != nil {
		return err
	}
	mps, err := mountPointsUnder(f, dir)
	f.Close()
	if err != nil {
		return err
	}
	for _, mp := range mps {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w", mp, err)
		}
	}
	return nil
}
