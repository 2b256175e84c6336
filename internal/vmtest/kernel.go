package vmtest

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/tenon-dev/tenon/internal/debfetch"
)

// Kernel is a kernel image shipped in a Debian package, pinned by checksum.
type Kernel struct {
	Release string   // uname -r, e.g. 7.2.13+deb14-cloud-amd64
	URLs    []string // where the .deb is fetched from, tried in order
	SHA256  string   // of the .deb
	Member  string   // the vmlinuz inside the package's data
	// ImageSHA256 is the SHA-256 of the extracted vmlinuz, so a cached
	// image is checked on every use.
	ImageSHA256 string
}

// DebianCloud is Debian unstable's cloud kernel: memory cgroup v1 compiled
// out (so the guest is pure cgroup v2), virtio drivers and virtio-fs built
// in, no modules needed. The pool URL goes away once unstable moves on;
// snapshot.debian.org keeps the same file by its SHA-1.
var DebianCloud = Kernel{
	Release: "7.2.13+deb14-cloud-amd64",
	URLs: []string{
		"http://deb.debian.org/debian/pool/main/l/linux-signed-amd64/linux-binary-7.2.13+deb14-cloud-amd64_7.2.13-1_amd64.deb",
		"https://snapshot.debian.org/file/a0f1596fea656c61e882445471fd6364937d6f7d",
	},
	SHA256:      "03e41f1c34c16583462f029e81944a85ebcdb78098c258dedfa1cfdd680a27f8",
	Member:      "usr/lib/modules/7.2.13+deb14-cloud-amd64/vmlinuz",
	ImageSHA256: "a1423b5059ed5c2ea8b0391f4cce75572382016d4d431454d92de37b86fe8e72",
}

// DefaultCacheDir is $TENON_VM_CACHE, or tenon/vm under the user's cache
// directory ($XDG_CACHE_HOME, else ~/.cache).
func DefaultCacheDir() (string, error) { return debfetch.CacheDir("TENON_VM_CACHE", "vm") }

// Image returns the path of the kernel image in cacheDir, fetching the
// package and extracting the image first when the cache lacks it. A
// download that fails, or a host without dpkg-deb, is an
// *UnavailableError; a checksum mismatch is a plain error.
func (k Kernel) Image(ctx context.Context, cacheDir string) (string, error) {
	img := filepath.Join(cacheDir, "vmlinuz-"+k.Release)
	if sum, err := debfetch.SumFile(img); err == nil && sum == k.ImageSHA256 {
		return img, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("vmtest: kernel cache: %w", err)
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return "", &UnavailableError{What: "dpkg-deb (to unpack the kernel package)", Err: err}
	}
	deb, err := k.download(ctx, cacheDir)
	if err != nil {
		return "", err
	}
	defer os.Remove(deb)
	if err := k.extract(ctx, deb, img); err != nil {
		return "", err
	}
	return img, nil
}

// download fetches the package into a temporary file in dir and checks it
// (debfetch.Download: a mismatch stops the fallbacks).
func (k Kernel) download(ctx context.Context, dir string) (string, error) {
	p, err := debfetch.Download(ctx, "kernel package "+k.Release, k.URLs, dir, k.SHA256)
	if ue := (*debfetch.UnavailableError)(nil); errors.As(err, &ue) {
		return "", &UnavailableError{What: ue.What, Err: ue.Err}
	}
	return p, err
}

type checksumError struct{ what, got, want string }

func (e *checksumError) Error() string {
	return fmt.Sprintf("vmtest: %s has SHA-256 %s, want %s", e.what, e.got, e.want)
}

// extract copies k.Member out of the package's data into img, checked.
func (k Kernel) extract(ctx context.Context, deb, img string) error {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("vmtest: dpkg-deb: %w", err)
	}
	tmp, found, err := copyMember(out, k.Member, filepath.Dir(img))
	io.Copy(io.Discard, out)
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("vmtest: dpkg-deb --fsys-tarfile: %w: %s", werr, strings.TrimSpace(stderr.String()))
	}
	if err == nil && !found {
		err = fmt.Errorf("vmtest: %s has no %s", path.Base(deb), k.Member)
	}
	if err != nil {
		if tmp != "" {
			os.Remove(tmp)
		}
		return err
	}
	if got, err := debfetch.SumFile(tmp); err != nil || got != k.ImageSHA256 {
		os.Remove(tmp)
		if err != nil {
			return err
		}
		return &checksumError{what: k.Member, got: got, want: k.ImageSHA256}
	}
	if err := os.Chmod(tmp, 0o644); err != nil { // CreateTemp made it 0600
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, img); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// copyMember writes the tar member named member (with or without a leading
// "./") to a temporary file in dir.
func copyMember(r io.Reader, member, dir string) (tmp string, found bool, err error) {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("vmtest: reading kernel package: %w", err)
		}
		if strings.TrimPrefix(hdr.Name, "./") != member {
			continue
		}
		f, err := os.CreateTemp(dir, "vmlinuz-*")
		if err != nil {
			return "", false, err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return f.Name(), true, err
	}
}
