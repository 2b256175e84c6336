package vmtest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/debfetch"
)

func TestKernelImageRejectsWrongChecksum(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing.deb") {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("not the pinned package"))
	}))
	defer srv.Close()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("the kernel fetch needs dpkg-deb (Debian's dpkg)")
	}
	tests := []struct {
		name        string
		urls        []string
		unavailable bool // *UnavailableError (callers skip), not a checksum failure
	}{
		{"mismatch fails, not skips", []string{srv.URL + "/k.deb"}, false},
		{"mismatch stops the fallbacks", []string{srv.URL + "/k.deb", srv.URL + "/missing.deb"}, false},
		{"missing everywhere is unavailable", []string{srv.URL + "/missing.deb"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			k := DebianCloud
			k.URLs = tt.urls
			_, err := k.Image(context.Background(), cache)
			var ue *UnavailableError
			var ce *debfetch.ChecksumError
			switch {
			case err == nil:
				t.Fatal("Image accepted a package with the wrong checksum")
			case tt.unavailable && !errors.As(err, &ue):
				t.Errorf("err = %v, want *UnavailableError", err)
			case !tt.unavailable && (!errors.As(err, &ce) || errors.As(err, &ue)):
				t.Errorf("err = %v, want a checksum error", err)
			}
			if left, _ := filepath.Glob(filepath.Join(cache, "*")); len(left) != 0 {
				t.Errorf("left in the cache: %v", left)
			}
		})
	}
}
