package edittool

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		file    string // content of a/f.py before; "" for none
		edit    trajectory.FileEdit
		want    string // content of the edited file after
		wantErr error  // errors.Is target; nil for success
		anyErr  bool   // some error, not a sentinel
	}{
		{name: "replace once", file: "def is_root(el):\n    pass\n",
			edit: trajectory.FileEdit{Path: "a/f.py", Old: "pass", New: "return True"}, want: "def is_root(el):\n    return True\n"},
		{name: "delete", file: "x = 1\ny = 2\n", edit: trajectory.FileEdit{Path: "a/f.py", Old: "y = 2\n"}, want: "x = 1\n"},
		{name: "replace all", file: "a a a", edit: trajectory.FileEdit{Path: "a/f.py", Old: "a", New: "b", ReplaceAll: true}, want: "b b b"},
		{name: "ambiguous", file: "a a", edit: trajectory.FileEdit{Path: "a/f.py", Old: "a", New: "b"}, want: "a a", wantErr: ErrAmbiguous},
		{name: "not found", file: "x", edit: trajectory.FileEdit{Path: "a/f.py", Old: "y", New: "z"}, want: "x", wantErr: ErrNotFound},
		{name: "write creates directories", edit: trajectory.FileEdit{Path: "a/new/g.sql", New: "select 1\n", Write: true}, want: "select 1\n"},
		{name: "write replaces", file: "old", edit: trajectory.FileEdit{Path: "a/f.py", New: "new", Write: true}, want: "new"},
		{name: "climbs out", edit: trajectory.FileEdit{Path: "../x", New: "y", Write: true}, anyErr: true},
		{name: "absolute", edit: trajectory.FileEdit{Path: "/tmp/x", New: "y", Write: true}, anyErr: true},
		{name: "through a symlink out of the tree", edit: trajectory.FileEdit{Path: "out/x", New: "y", Write: true}, anyErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "ws")
			outside := filepath.Join(dir, "outside")
			for _, d := range []string{filepath.Join(root, "a"), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(root, "a", "f.py"), []byte(tt.file), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			err := Apply(root, tt.edit)
			switch {
			case tt.anyErr:
				if err == nil {
					t.Fatal("Apply succeeded, want an error")
				}
				if ents, _ := os.ReadDir(outside); len(ents) > 0 {
					t.Errorf("the edit wrote outside the workspace: %v", ents)
				}
				return
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("Apply = %v, want %v", err, tt.wantErr)
			}
			p := filepath.Join(root, filepath.FromSlash(tt.edit.Path))
			got, rerr := os.ReadFile(p)
			if rerr != nil || string(got) != tt.want {
				t.Errorf("file = %q (%v), want %q", got, rerr, tt.want)
			}
			if fi, _ := os.Stat(p); tt.file != "" && fi.Mode().Perm() != 0o755 {
				t.Errorf("mode = %v, want the file's 0755 kept", fi.Mode().Perm())
			}
		})
	}
}

func TestArgsRoundTrip(t *testing.T) {
	for _, e := range []trajectory.FileEdit{
		{Path: "a/b.py", Old: "x", New: "", ReplaceAll: true},
		{Path: "c.sql", New: "-- leading dashes\n", Write: true},
	} {
		var got trajectory.FileEdit
		args := Args(e)
		if err := NewFlagSet("edit", &got).Parse(args[2:]); err != nil {
			t.Fatalf("parsing %q: %v", args, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("Args(%+v) parses back as %+v", e, got)
		}
	}
}
