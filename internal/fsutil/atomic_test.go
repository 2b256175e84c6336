package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	errWrite := errors.New("write failed")
	tests := []struct {
		name     string
		existing string // content at path before the write; "" for none
		perm     os.FileMode
		write    func(io.Writer) error
		wantErr  error
		want     string // content at path afterwards
	}{
		{"new file", "", 0o644, writeString("new"), nil, "new"},
		{"replaces", "old", 0o600, writeString("new"), nil, "new"},
		{"failed write keeps the old file", "old", 0o644, func(w io.Writer) error {
			if _, err := io.WriteString(w, "half"); err != nil {
				return err
			}
			return errWrite
		}, errWrite, "old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteFile(path, tt.perm, tt.write)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WriteFile: %v, want %v", err, tt.wantErr)
			}
			b, rerr := os.ReadFile(path)
			if rerr != nil || string(b) != tt.want {
				t.Errorf("content %q (%v), want %q", b, rerr, tt.want)
			}
			if err == nil {
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != tt.perm {
					t.Errorf("mode %v (%v), want %v", fi.Mode().Perm(), err, tt.perm)
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only out.json (no temporary file left)", len(entries))
			}
		})
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "out.json")
	err := WriteFile(path, 0o644, writeString("x"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WriteFile into a missing directory: %v, want a not-exist error", err)
	}
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}
