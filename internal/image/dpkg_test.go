package image

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const status = `Package: app
Status: install ok installed
Architecture: amd64
Depends: libc6 (>= 2.34), awk | mawk, python3:any (>= 3.11~), virtual-sh
Pre-Depends: base

Package: libc6
Status: install ok installed
Architecture: amd64
Multi-Arch: same
Depends: libgcc-s1

Package: libgcc-s1
Status: install ok installed
Architecture: amd64

Package: mawk
Status: install ok installed
Architecture: amd64
Provides: awk

Package: python3
Status: install ok installed
Architecture: amd64
Description: long
 continued description line
 .

Package: dash
Status: install ok installed
Architecture: amd64
Provides: virtual-sh

Package: base
Status: install ok installed
Architecture: all

Package: removed
Status: deinstall ok config-files
Architecture: amd64

Package: unrelated
Status: install ok installed
Architecture: amd64
`

func TestParseStatus(t *testing.T) {
	pkgs, err := ParseStatus(strings.NewReader(status))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pkgs["removed"]; ok {
		t.Error("a package in config-files state was kept")
	}
	app := pkgs["app"]
	if app == nil {
		t.Fatal("app missing")
	}
	want := [][]string{{"base"}, {"libc6"}, {"awk", "mawk"}, {"python3"}, {"virtual-sh"}}
	if !slices.EqualFunc(app.Depends, want, slices.Equal) {
		t.Errorf("app depends %q, want %q", app.Depends, want)
	}
	if pkgs["libc6"].MultiArch != "same" || pkgs["libc6"].Arch != "amd64" {
		t.Errorf("libc6 = %+v", pkgs["libc6"])
	}
	if _, err := ParseStatus(strings.NewReader("garbage line\n")); err == nil {
		t.Error("malformed status accepted")
	}
}

func TestClosure(t *testing.T) {
	pkgs, err := ParseStatus(strings.NewReader(status))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		roots []string
		want  []string
		err   error
	}{
		{"transitive with providers", []string{"app"}, []string{"app", "base", "dash", "libc6", "libgcc-s1", "mawk", "python3"}, nil},
		{"leaf", []string{"libgcc-s1"}, []string{"libgcc-s1"}, nil},
		{"virtual root", []string{"awk"}, []string{"mawk"}, nil},
		{"missing root", []string{"app", "nope"}, nil, ErrNoPackage},
		{"removed root", []string{"removed"}, nil, ErrNoPackage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Closure(pkgs, tt.roots)
			if !errors.Is(err, tt.err) || !slices.Equal(got, tt.want) {
				t.Fatalf("Closure(%v) = %v, %v; want %v, %v", tt.roots, got, err, tt.want, tt.err)
			}
		})
	}
	_, err = Closure(pkgs, []string{"nope", "app", "removed"})
	if err == nil || !strings.Contains(err.Error(), ": nope, removed (") {
		t.Errorf("two missing roots: %v, want both named", err)
	}
}

func TestParseFileList(t *testing.T) {
	got, err := ParseFileList(strings.NewReader("/.\n/usr\n/usr/bin/x\n\n  /etc/y  \nnot-a-path\n"))
	want := []string{"/usr", "/usr/bin/x", "/etc/y"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q %v, want %q", got, err, want)
	}
}
