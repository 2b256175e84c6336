package api

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Handler returns the API's routes behind the authentication check.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agents", s.handleCreate)
	mux.HandleFunc("GET /v1/agents", s.handleList)
	mux.HandleFunc("GET /v1/agents/{id}", s.handleGet)
	mux.HandleFunc("DELETE /v1/agents/{id}", s.handleDelete)
	mux.HandleFunc("POST /v1/agents/{id}/exec", s.handleExec)
	mux.HandleFunc("POST /v1/agents/{id}/wait", s.handleWait)
	mux.HandleFunc("PUT /v1/agents/{id}/files/{path...}", s.handlePutFile)
	mux.HandleFunc("GET /v1/agents/{id}/files/{path...}", s.handleGetFile)
	mux.HandleFunc("POST /v1/agents/{id}/openai/v1/{rest...}", s.handleProxy)
	mux.HandleFunc("GET /v1/status", s.handleStatus)
	mux.HandleFunc("GET /v1/events", s.handleEvents)
	mux.Handle("GET /metrics", s.met.handler())
	return s.authenticate(mux)
}

// authenticate requires the bearer token on requests that came over TCP.
// The token may come as "Authorization: Bearer T" or, for the model proxy
// whose Authorization header belongs to the upstream, "X-Tenon-Token: T".
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if need, _ := r.Context().Value(needAuthKey{}).(bool); need && !s.tokenOK(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tenon"`)
			writeError(w, ErrUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tokenOK(r *http.Request) bool {
	if s.cfg.Token == "" {
		return false
	}
	got := r.Header.Get("X-Tenon-Token")
	if got == "" {
		got, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}
