package containerdtest

import (
	"context"

	"github.com/tenon-dev/tenon/internal/debfetch"
)

// Containerd is Debian trixie's containerd 1.7.24: the daemon, the runc
// v2 shim and ctr (for image imports).
var Containerd = debfetch.Package{
	Name: "containerd", Version: "1.7.24~ds1-6+deb13u1",
	URLs:   []string{"http://deb.debian.org/debian/pool/main/c/containerd/containerd_1.7.24~ds1-6+deb13u1_amd64.deb"},
	SHA256: "ed708deb96fe476a3bce4efa5c0538dfbcf717ab9a7c7944ba7260342c25899c",
	Files: map[string]string{
		"usr/bin/containerd":              "9912cdfff923738916167fcecdfb09a5c908b5e26aaabc5fa9268b37988dd0ba",
		"usr/bin/containerd-shim-runc-v2": "5e7d0305555401d60ad2145b126319755740e0c0686a1263b216cc34faa2525b",
		"usr/bin/ctr":                     "972d63c49f747ca861795df0b1493fa2ab09b2d035ceb986be75db28349d1427",
	},
}

// Runc is Debian bookworm's runc 1.1.5, which runs on bookworm's glibc.
var Runc = debfetch.Package{
	Name: "runc", Version: "1.1.5+ds1-1+deb12u1",
	URLs:   []string{"http://deb.debian.org/debian/pool/main/r/runc/runc_1.1.5+ds1-1+deb12u1_amd64.deb"},
	SHA256: "a00351f8c0318de0b424ecf5cd0fdb69880a89f3511cae4f6fff7de3e57881c5",
	Files:  map[string]string{"usr/sbin/runc": "9a87d5bcdd630ec420ec56a6c21b70aa6960edcefe1cf4bb181cee290bdd6b98"},
}

// Binaries are the cached executables a test runs.
type Binaries struct {
	Containerd, Shim, Ctr, Runc string
}

// Fetch installs containerd and runc into the cache, $TENON_CACHE or
// ~/.cache/tenon (a no-op when they are there), and returns their paths. A host that cannot fetch them gets
// a *debfetch.UnavailableError.
func Fetch(ctx context.Context) (Binaries, error) {
	root, err := debfetch.CacheDir("TENON_CACHE", "")
	if err != nil {
		return Binaries{}, err
	}
	c, err := Containerd.Install(ctx, root)
	if err != nil {
		return Binaries{}, err
	}
	r, err := Runc.Install(ctx, root)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Containerd: c["containerd"], Shim: c["containerd-shim-runc-v2"], Ctr: c["ctr"], Runc: r["runc"]}, nil
}
