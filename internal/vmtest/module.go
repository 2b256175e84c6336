package vmtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

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
		if sum, err := fileSHA256(out[i]); err != nil || sum != mod.SHA256 {
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
	deb, err := m.download(ctx, cacheDir)
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

func (m Modules) download(ctx context.Context, dir string) (string, error) {
	var errs []error
	for _, u := range m.URLs {
		p, err := fetchPinned(ctx, u, dir, m.SHA256)
		if err == nil {
			return p, nil
		}
		var mismatch *checksumError
		if errors.As(err, &mismatch) {
			return "", err
		}
		errs = append(errs, err)
	}
	return "", &UnavailableError{What: "kernel modules package " + m.Release, Err: errors.Join(errs...)}
}

// extractModule copies mod out of the package deb, decompresses it with
// xz and moves it to dst once its checksum matches.
func extractModule(ctx context.Context, deb string, mod Module, dst string) error {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	r, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("vmtest: dpkg-deb: %w", err)
	}
	xzFile, found, err := copyMember(r, mod.Member, filepath.Dir(dst))
	io.Copy(io.Discard, r)
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("vmtest: dpkg-deb --fsys-tarfile: %w", werr)
	}
	if err == nil && !found {
		err = fmt.Errorf("vmtest: %s has no %s", path.Base(deb), mod.Member)
	}
	if xzFile != "" {
		defer os.Remove(xzFile)
	}
	if err != nil {
		return err
	}
	ko, err := exec.CommandContext(ctx, "xz", "-dc", xzFile).Output()
	if err != nil {
		return fmt.Errorf("vmtest: decompressing %s: %w", mod.Member, err)
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, ko, 0o644); err != nil {
		return err
	}
	if got, err := fileSHA256(tmp); err != nil || got != mod.SHA256 {
		os.Remove(tmp)
		if err != nil {
			return err
		}
		return &checksumError{what: mod.Member, got: got, want: mod.SHA256}
	}
	return os.Rename(tmp, dst)
}
