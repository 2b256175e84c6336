package api

import (
	"strings"
	"testing"
	"time"
)

// TestBackgroundRequest: the exec request's background flag, or a command
// that visibly starts a process, reaches the backend as a background action.
func TestBackgroundRequest(t *testing.T) {
	for _, tc := range []struct {
		req  ExecRequest
		want bool
	}{
		{ExecRequest{Command: "true"}, false},
		{ExecRequest{Command: "true", Background: true}, true},
		{ExecRequest{Command: "python3 -m http.server 8000 &"}, true},
		// a command of any length is classed by its beginning and its end
		{ExecRequest{Command: "cat > f <<'EOF'\n" + strings.Repeat("x", 15<<20) + "\nEOF\npython3 -m http.server 8000 &"}, true},
		{ExecRequest{Command: "nohup ./serve.sh\n" + strings.Repeat("x", 15<<20)}, true},
		{ExecRequest{Command: "cat > f <<'EOF'\n" + strings.Repeat("x", 15<<20) + "\nEOF"}, false},
	} {
		got := execRequest(tc.req, time.Second, 1024)
		if got.Background != tc.want || got.Shell != tc.req.Command || got.Timeout != time.Second || got.OutputLimit != 1024 {
			t.Errorf("%+v: backend request %+v, want background %v", tc.req, got, tc.want)
		}
	}
}

// TestKeptCommand: the history keeps a command's first maxCommandKept
// bytes, cut at a rune.
func TestKeptCommand(t *testing.T) {
	if got := keptCommand("ls -la"); got != "ls -la" {
		t.Errorf("short command kept as %q", got)
	}
	long := strings.Repeat("a", maxCommandKept-1) + "é" + strings.Repeat("b", 1<<20)
	if got := keptCommand(long); got != long[:maxCommandKept-1] {
		t.Errorf("long command kept as %d bytes ending %q, want the first %d (no split rune)", len(got), got[len(got)-3:], maxCommandKept-1)
	}
}
