package main

import (
	"strings"
	"testing"
)

// TestCommitLine: the version line names the commit, says when the tree
// had uncommitted changes, and says why it does not know the commit.
func TestCommitLine(t *testing.T) {
	for _, tc := range []struct {
		rev           string
		modified, ok  bool
		want, wantNot string
	}{
		{"abc123", false, true, "commit abc123", "uncommitted"},
		{"abc123", true, true, "commit abc123 with uncommitted changes", ""},
		{"", false, false, "-buildvcs=true", "commit abc"},
	} {
		got := commitLine(tc.rev, tc.modified, tc.ok)
		if !strings.Contains(got, tc.want) || tc.wantNot != "" && strings.Contains(got, tc.wantNot) {
			t.Errorf("commitLine(%q, %v, %v) = %q, want %q (and not %q)", tc.rev, tc.modified, tc.ok, got, tc.want, tc.wantNot)
		}
	}
}
