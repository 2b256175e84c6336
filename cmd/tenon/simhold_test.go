package main

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/app"
)

func TestWriteHolds(t *testing.T) {
	tests := []struct {
		name  string
		holds []app.SimHold
		want  []string // substrings; nil: no output
	}{
		{"no hold armed", []app.SimHold{{Policy: "eager"}}, nil},
		{"a gate run that held", []app.SimHold{{Policy: "eager"}, {Policy: "gate", Holds: 3, Resolved: 1, Released: 2, HeldS: 7.5, Waits: 5}},
			[]string{"OOM hold", "gate", "7.5 s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeHolds(&b, tc.holds); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if tc.want == nil && out != "" {
				t.Fatalf("printed %q, want nothing", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Fatalf("output %q lacks %q", out, w)
				}
			}
			if strings.Contains(out, "eager") {
				t.Fatalf("output %q lists a run without the hold", out)
			}
		})
	}
}
