package api

import (
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
	} {
		got := execRequest(tc.req, time.Second, 1024)
		if got.Background != tc.want || got.Shell != tc.req.Command || got.Timeout != time.Second || got.OutputLimit != 1024 {
			t.Errorf("%+v: backend request %+v, want background %v", tc.req, got, tc.want)
		}
	}
}
