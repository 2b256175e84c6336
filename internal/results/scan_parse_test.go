package results

import (
	"reflect"
	"strings"
	"testing"
)

func TestScanMarkdown(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		commits []string
		dirty   int
		command bool
	}{
		{
			name:    "bench list item",
			in:      "Command:\n\n    tenon bench --quick\n\n- commit: `df1ec6d995740ab81dc3d6d58e7976d7216db4ee`\n",
			commits: []string{"df1ec6d995740ab81dc3d6d58e7976d7216db4ee"},
			command: true,
		},
		{
			name:    "id wrapped to the next line",
			in:      "The binary was built from the commit\n`fcbe7ec` as root.\n",
			commits: []string{"fcbe7ec"},
		},
		{
			name:    "clean tree",
			in:      "`da8dce060bb896f465c4cc01b90e624806e5b695` (clean tree, quiet)\n",
			commits: []string{"da8dce060bb896f465c4cc01b90e624806e5b695"},
		},
		{
			name: "id without a commit context",
			in:   "binary at 718eae2\n\nmore text\n",
		},
		{
			name: "numbers in a commit line are not ids",
			in:   "Commit took 1000000 ns and 2500000 ns\n",
		},
		{
			name:    "repeats once",
			in:      "commit abc1234, and again commit abc1234\n",
			commits: []string{"abc1234"},
		},
		{
			name:    "uncommitted changes",
			in:      "Commit: `5e89e53` **plus uncommitted\nchanges** to internal/archive\n",
			commits: []string{"5e89e53"},
			dirty:   1,
		},
		{
			name:    "built from the working tree",
			in:      "go build -o /tmp/x/tenon ./cmd/tenon` from the working tree, commit `ec294e4`\n",
			commits: []string{"ec294e4"},
			dirty:   1,
			command: true,
		},
		{
			name:    "renamed binary",
			in:      "`/tmp/tenon-h harness replay --swe 3`\n",
			command: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := scanMarkdown(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.commits, tt.commits) {
				t.Errorf("commits = %q, want %q", f.commits, tt.commits)
			}
			if len(f.dirty) != tt.dirty {
				t.Errorf("dirty lines = %q, want %d", f.dirty, tt.dirty)
			}
			if f.command != tt.command {
				t.Errorf("command = %v, want %v", f.command, tt.command)
			}
		})
	}
}

func TestScanJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		commits []string
		dirty   bool
		command bool
	}{
		{
			name:    "bench meta",
			in:      `{"results": [], "meta": {"command": "tenon bench", "commit": "cea52f5", "dirty": false}}`,
			commits: []string{"cea52f5"},
			command: true,
		},
		{
			name:    "dirty",
			in:      `{"meta": {"command": "tenon bench", "commit": "cea52f5", "dirty": true}}`,
			commits: []string{"cea52f5"},
			dirty:   true,
			command: true,
		},
		{
			name: "a bare array names nothing",
			in:   `[{"sandboxes": 100, "green_step_ms": 0.02}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := scanJSON(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.commits, tt.commits) || f.dirty != tt.dirty || f.command != tt.command {
				t.Errorf("got %+v, want commits %q dirty %v command %v", f, tt.commits, tt.dirty, tt.command)
			}
		})
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		text, name string
		want       bool
	}{
		{"[bench.md](bench.md)", "bench.md", true},
		{"`bench-quick.md`", "bench.md", false},
		{"tenon-bench.md", "bench.md", false},
		{"sim-scale-10k.json", "sim-scale.json", false},
		{"bench-ablation-ablation.png", "bench-ablation.png", false},
		{"see sim-scale.json.", "sim-scale.json", true},
	}
	for _, tt := range tests {
		if got := mentions(tt.text, tt.name); got != tt.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", tt.text, tt.name, got, tt.want)
		}
	}
}

func TestLinkTargets(t *testing.T) {
	in := "| [a.md](a.md), [b.json](b.json) | see [archive/](archive/README.md), " +
		"[the seed](https://example.org/x.md), [here](#goals), [c](c.md#reading) and [d]( spaced ) |"
	got := strings.Join(linkTargets(in), ",")
	if want := "a.md,b.json,archive/README.md,c.md"; got != want {
		t.Errorf("linkTargets = %q, want %q", got, want)
	}
}
