package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWriteResults: the Markdown, the JSON and the plots with something to
// show are written world-readable into the directory, nothing else.
func TestWriteResults(t *testing.T) {
	dir := t.TempDir()
	meta := testMeta()
	files, err := WriteResults(dir, meta, fakeResults(metrics("tenon", 14, 20, 20, 0)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bench-test.md", "bench-test.json", "bench-test-workloads.png"}
	var got []string
	for _, f := range files {
		if filepath.Dir(f) != dir {
			t.Errorf("%s is not in %s", f, dir)
		}
		got = append(got, filepath.Base(f))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q (no plot of a group that did not run)", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Errorf("%d entries in the directory, want %d (no temporary or empty file left)", len(entries), len(want))
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm() != 0o644 || fi.Size() == 0 {
			t.Errorf("%s: %v, %v; want a non-empty file of mode 0644", f, fi, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "bench-test.md"))
	if !strings.Contains(string(md), "bench-test-workloads.png") {
		t.Errorf("the Markdown does not show the plot it was written with")
	}
}

// TestReplot: the plots of a results JSON are redrawn next to it, the
// Markdown is not; a missing, foreign or plotless file is an error naming it.
func TestReplot(t *testing.T) {
	dir := t.TempDir()
	r := fakeResults(metrics("tenon", 14, 20, 20, 0))
	r.Outcomes = append(r.Outcomes, Outcome{Case: Case{Name: "ablation/swe/1GiB", Group: GroupAblation},
		Comparison: fakeResults(metrics("tenon-no-gate", 30, 20, 20, 0)).Outcomes[2].Comparison})
	path := filepath.Join(dir, "run1.json")
	var b bytes.Buffer
	if err := WriteJSON(&b, Meta{Name: "run1"}, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Replot(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "run1-ablation.png"), filepath.Join(dir, "run1-workloads.png")}
	if !slices.Equal(files, want) {
		t.Fatalf("files %q, want %q", files, want)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG (%v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "run1.md")); !os.IsNotExist(err) {
		t.Errorf("Replot wrote the Markdown (%v); it redraws plots only", err)
	}

	empty := filepath.Join(dir, "empty.json")
	b.Reset()
	if err := WriteJSON(&b, Meta{Name: "empty"}, &Results{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "missing.json"), "missing.json"},
		{"not a results file", want[0], "run1-ablation.png"},
		{"nothing to plot", empty, "empty.json: nothing to plot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := Replot(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Replot(%s): %v, want an error with %q", tt.path, err, tt.want)
			}
			if len(files) != 0 {
				t.Errorf("wrote %q", files)
			}
		})
	}
}
