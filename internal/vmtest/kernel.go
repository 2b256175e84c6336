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
	deb, err := downloadPinned(ctx, "kernel package "+k.Release, k.URLs, cacheDir, k.SHA256)
	if err != nil {
		return "", err
	}
	defer os.Remove(deb)
	if err := k.extract(ctx, deb, img); err != nil {
		return "", err
	}
	return img, nil
}

// downloadPinned fetches the package (what) from the first of urls that
// serves it into a temporary file in dir and checks it against sum
// (debfetch.Download: a mismatch stops the fallbacks).
func downloadPinned(ctx context.Context, what string, urls []string, dir, sum string) (string, error) {
	p, err := debfetch.Download(ctx, what, urls, dir, sum)
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
	tmp, err := extractMember(ctx, deb, k.Member, filepath.Dir(img))
	if err != nil {
		return err
	}
	return installChecked(tmp, img, k.Member, k.ImageSHA256)
}

// extractMember copies member out of the package deb's data into a
// temporary file in dir.
func extractMember(ctx context.Context, deb, member, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("vmtest: dpkg-deb: %w", err)
	}
	tmp, found, err := copyMember(out, member, dir)
	io.Copy(io.Discard, out)
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("vmtest: dpkg-deb --fsys-tarfile: %w: %s", werr, strings.TrimSpace(stderr.String()))
	}
	if err == nil && !found {
		err = fmt.Errorf("vmtest: %s has no %s", path.Base(deb), member)
	}
	if err != nil && tmp != "" {
		os.Remove(tmp)
	}
	return tmp, err
}

// installChecked moves tmp to dst (mode 0644) once its SHA-256 is sum;
// otherwise it removes tmp. what names it in the error.
func installChecked(tmp, dst, what, sum string) error {
	if got, err := debfetch.SumFile(tmp); err != nil || got != sum {
		os.Remove(tmp)
		if err != nil {
			return err
		}
		return &checksumError{what: what, got: got, want: sum}
	}
	if err := os.Chmod(tmp, 0o644); err != nil { // CreateTemp made it 0600
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
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

// Modules are kernel modules shipped in a Debian package (xz-compressed
// .ko files), pinned by checksum: the package's and each module's once
// decompressed. The guest loads them with insmod before its tests
// (Config.Modules), in order, so dependencies come first.
type Modules struct {
	Release string   // the kernel's uname -r
	URLs    []string // where the .deb is fetched from, tried in order
	SHA256  string   // of the .deb
	Members []Module
}

// Module is one module in the package.
type Module struct {
	Member string // the .ko.xz inside the package's data
	SHA256 string // of the decompressed .ko
}

// DebianCloudZram is zram (a module in the cloud kernel, with zsmalloc
// built in) and the LZ4HC compressor it depends on, from the cloud
// kernel's modules package: with it the guest has /sys/block/zram0 and
// residency's page-out tier (internal/swap) works under pure cgroup v2.
var DebianCloudZram = Modules{
	Release: DebianCloud.Release,
	URLs: []string{
		"http://deb.debian.org/debian/pool/main/l/linux/linux-modules-7.2.13+deb14-cloud-amd64_7.2.13-1_amd64.deb",
	},
	SHA256: "97d79546041e3fdfb44dccff180938894d1bf8eb298f091f88539c1b37080bef",
	Members: []Module{
		{Member: "usr/lib/modules/7.2.13+deb14-cloud-amd64/kernel/lib/lz4/lz4hc_compress.ko.xz",
			SHA256: "c871d333865352d971185b009d25924862cbbdbc0cc0ab7538a9a3b8d327e373"},
		{Member: "usr/lib/modules/7.2.13+deb14-cloud-amd64/kernel/drivers/block/zram/zram.ko.xz",
			SHA256: "9888367aa983974ee632b949a3b0a7d1242475bb2ec38a5f2d111c35bf4c7c47"},
	},
}

// Files returns the paths of the decompressed modules in cacheDir, in
// order, fetching the package and extracting them first when the cache
// lacks one. A failed download, or a host without dpkg-deb or xz, is an
// *UnavailableError; a checksum mismatch is a plain error.
func (m Modules) Files(ctx context.Context, cacheDir string) ([]string, error) {
	out := make([]string, len(m.Members))
	missing := false
	for i, mod := range m.Members {
		out[i] = filepath.Join(cacheDir, m.Release, strings.TrimSuffix(path.Base(mod.Member), ".xz"))
		if sum, err := debfetch.SumFile(out[i]); err != nil || sum != mod.SHA256 {
			missing = true
		}
	}
	if !missing {
		return out, nil
	}
	for _, tool := range []string{"dpkg-deb", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, &UnavailableError{What: tool + " (to unpack the kernel modules)", Err: err}
		}
	}
	if err := os.MkdirAll(filepath.Join(cacheDir, m.Release), 0o755); err != nil {
		return nil, fmt.Errorf("vmtest: module cache: %w", err)
	}
	deb, err := downloadPinned(ctx, "kernel modules package "+m.Release, m.URLs, cacheDir, m.SHA256)
	if err != nil {
		return nil, err
	}
	defer os.Remove(deb)
	for i, mod := range m.Members {
		if err := extractModule(ctx, deb, mod, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// extractModule copies mod out of the package deb, decompresses it with
// xz and moves it to dst once its checksum matches.
func extractModule(ctx context.Context, deb string, mod Module, dst string) error {
	xzFile, err := extractMember(ctx, deb, mod.Member, filepath.Dir(dst))
	if err != nil {
		return err
	}
	defer os.Remove(xzFile)
	ko, err := exec.CommandContext(ctx, "xz", "-dc", xzFile).Output()
	if err != nil {
		return fmt.Errorf("vmtest: decompressing %s: %w", mod.Member, err)
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, ko, 0o644); err != nil {
		return err
	}
	return installChecked(tmp, dst, mod.Member, mod.SHA256)
}
