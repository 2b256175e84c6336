package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/kube"
)

func TestNodePolicy(t *testing.T) {
	tests := []struct {
		name, policy string
		ok           bool
	}{
		{name: "the gate", policy: "gate", ok: true},
		{name: "tenon: gate, admission and residency", policy: "tenon", ok: true},
		{name: "an ablation with the gate", policy: "tenon-always-resident", ok: true},
		{name: "an ablation without the gate", policy: "tenon-no-gate"},
		{name: "no gate", policy: "eager"},
		{name: "admission alone", policy: "admission"},
		{name: "agent-level slots", policy: "static-4"},
		{name: "unknown", policy: "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := nodePolicy(tc.policy); (err == nil) != tc.ok {
				t.Errorf("nodePolicy(%q) = %v, want ok %v", tc.policy, err, tc.ok)
			}
		})
	}
}

func TestNodeConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  NodeConfig
		want string
	}{
		{"no budget", NodeConfig{Policy: "gate"}, "--budget"},
		{"admission without a state directory", NodeConfig{Policy: "tenon", Budget: 1 << 30}, "--state-dir"},
		{"an API server without the node's name", NodeConfig{Policy: "gate", Budget: 1 << 30, Kube: &kube.Config{Server: "https://x"}}, "--node-name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Node(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Node = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestRequireToken(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tests := []struct {
		name, token, header string
		want                int
	}{
		{"no token configured", "", "", http.StatusNoContent},
		{"the token", "s3cret", "Bearer s3cret", http.StatusNoContent},
		{"a wrong token", "s3cret", "Bearer nope", http.StatusUnauthorized},
		{"no header", "s3cret", "", http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/v1/pods/ns/a/actions", nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			rec := httptest.NewRecorder()
			requireToken(tc.token, ok).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d", rec.Code, tc.want)
			}
		})
	}
}
