package api

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

// handleProxy forwards an OpenAI-compatible request of an agent to the
// upstream API, streaming the answer back as it arrives, and marks a model
// wait for the agent from the request until the last byte of the answer.
func (s *Server) handleProxy(w http.ResponseWriter, r *http.Request) {
	ag, err := s.agentOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if s.cfg.Upstream == "" {
		writeJSON(w, http.StatusNotImplemented, Error{Error: "api: no upstream configured (tenon serve --upstream URL)"})
		return
	}
	up, err := url.Parse(s.cfg.Upstream)
	if err != nil {
		writeError(w, fmt.Errorf("parsing upstream: %w", err))
		return
	}
	rest := r.PathValue("rest")
	s.modelWait(ag, true)
	defer s.modelWait(ag, false)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = up.Scheme
			pr.Out.URL.Host = up.Host
			pr.Out.URL.Path = strings.TrimSuffix(up.Path, "/") + "/" + rest
			pr.Out.URL.RawPath = ""
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			pr.Out.Host = up.Host
			pr.Out.Header.Del("X-Tenon-Token")
			if s.cfg.UpstreamKey != "" {
				pr.Out.Header.Set("Authorization", "Bearer "+s.cfg.UpstreamKey)
			} else if s.cfg.Token != "" && s.tokenOK(pr.In) && pr.In.Header.Get("X-Tenon-Token") == "" {
				pr.Out.Header.Del("Authorization") // it was tenon's token, not the upstream's
			}
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeJSON(w, http.StatusBadGateway, Error{Error: "api: upstream: " + err.Error()})
		},
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	rp.ServeHTTP(w, r)
}
