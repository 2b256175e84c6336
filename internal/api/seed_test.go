package api

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func tarOf(t *testing.T, entries ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		body := []byte("data:" + h.Name)
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	return buf.Bytes()
}

func TestSeedTar(t *testing.T) {
	tests := []struct {
		name    string
		entries []tar.Header
		want    []string // files that must exist
		absent  []string // paths that must not exist
		wantErr error
	}{
		{
			name: "files and dirs",
			entries: []tar.Header{
				{Name: "src/", Typeflag: tar.TypeDir, Mode: 0o755},
				{Name: "./src/a.go", Typeflag: tar.TypeReg, Mode: 0o644},
				{Name: "b/c/d.txt", Typeflag: tar.TypeReg, Mode: 0o600},
			},
			want: []string{"src/a.go", "b/c/d.txt"},
		},
		{
			name:    "dot-dot entry refused",
			entries: []tar.Header{{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644}},
			wantErr: ErrBadPath,
		},
		{
			name: "symlink skipped, file through it refused",
			entries: []tar.Header{
				{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/tmp"},
				{Name: "ok.txt", Typeflag: tar.TypeReg, Mode: 0o644},
			},
			want:   []string{"ok.txt"},
			absent: []string{"link"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			err := seed(dir, CreateAgentRequest{Tar: tarOf(t, tt.entries...)})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("seed = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.want {
				b, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil || string(b) != "data:"+trimDot(p, tt.entries) {
					t.Errorf("%s = %q, %v", p, b, err)
				}
			}
			for _, p := range tt.absent {
				if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
					t.Errorf("%s was extracted", p)
				}
			}
		})
	}
	if err := seed(t.TempDir(), CreateAgentRequest{Tar: []byte("not a tar archive at all, not at all")}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("garbage tar: %v, want ErrBadRequest", err)
	}
}

// trimDot returns the header name that produced path p.
func trimDot(p string, hs []tar.Header) string {
	for _, h := range hs {
		if h.Name == p || h.Name == "./"+p {
			return h.Name
		}
	}
	return p
}
