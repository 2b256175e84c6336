package api_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/api"
)

// The decoders must never panic, must accept only what re-encodes to a
// valid request, and must fail only with ErrBadRequest or ErrBadPath.
func FuzzDecodeExec(f *testing.F) {
	f.Add(`{"command":"ls -la","cwd":"/workspace","timeout_s":5}`)
	f.Add(`{"command":""}`)
	f.Add(`{"command":"x","env":["A=B"],"mem_hint_bytes":1048576,"class":"test"}`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := api.DecodeExec(strings.NewReader(body))
		if err != nil {
			if !errors.Is(err, api.ErrBadRequest) {
				t.Fatalf("error %v is not ErrBadRequest", err)
			}
			return
		}
		if strings.TrimSpace(req.Command) == "" || req.TimeoutS < 0 || req.MemHintBytes < 0 {
			t.Fatalf("accepted invalid request %+v", req)
		}
		b, _ := json.Marshal(req)
		if _, err := api.DecodeExec(strings.NewReader(string(b))); err != nil {
			t.Fatalf("re-encoded request refused: %v", err)
		}
	})
}

func FuzzDecodeCreateAgent(f *testing.F) {
	f.Add(`{"image":"host","files":{"a/b.txt":"x"},"env":["K=V"],"labels":{"l":"v"}}`)
	f.Add(`{"files":{"../x":"y"}}`)
	f.Add(`{"tar":"AAAA"}`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := api.DecodeCreateAgent(strings.NewReader(body))
		if err != nil {
			if !errors.Is(err, api.ErrBadRequest) && !errors.Is(err, api.ErrBadPath) {
				t.Fatalf("error %v is neither ErrBadRequest nor ErrBadPath", err)
			}
			return
		}
		for p := range req.Files {
			if strings.HasPrefix(p, "/") || strings.Contains("/"+p+"/", "/../") {
				t.Fatalf("accepted escaping path %q", p)
			}
		}
	})
}

func FuzzDecodeWait(f *testing.F) {
	f.Add(`{"state":"begin"}`)
	f.Add(`{"state":"end"}`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := api.DecodeWait(strings.NewReader(body))
		if err == nil && req.State != "begin" && req.State != "end" {
			t.Fatalf("accepted state %q", req.State)
		}
	})
}
