package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// The harness API's routes (docs/kubernetes.md, "The harness API"). A pod
// is named by its namespace and name; under agent-sandbox that is its
// Sandbox's too.
const (
	RouteActionStart = "POST /v1/pods/{namespace}/{name}/actions"
	RouteActionEnd   = "POST /v1/pods/{namespace}/{name}/actions/{id}/done"
	RouteWait        = "POST /v1/pods/{namespace}/{name}/wait"
	RouteEnd         = "DELETE /v1/pods/{namespace}/{name}"
)

// maxBody bounds a request body of the harness API.
const maxBody = 64 << 10

// HandleHarness adds the harness API's routes to mux.
func (n *Node) HandleHarness(mux *http.ServeMux) {
	mux.HandleFunc(RouteActionStart, func(w http.ResponseWriter, r *http.Request) {
		var req ActionRequest
		if !decode(w, r, &req) {
			return
		}
		g, err := n.ActionStart(r.Context(), r.PathValue("namespace"), r.PathValue("name"), req)
		reply(w, g, err)
	})
	mux.HandleFunc(RouteActionEnd, func(w http.ResponseWriter, r *http.Request) {
		var res ActionResult
		if !decode(w, r, &res) {
			return
		}
		err := n.ActionEnd(r.PathValue("namespace"), r.PathValue("name"), r.PathValue("id"), res)
		reply(w, struct{}{}, err)
	})
	mux.HandleFunc(RouteWait, func(w http.ResponseWriter, r *http.Request) {
		var req WaitRequest
		if !decode(w, r, &req) {
			return
		}
		reply(w, struct{}{}, n.Wait(r.PathValue("namespace"), r.PathValue("name"), req))
	})
	mux.HandleFunc(RouteEnd, func(w http.ResponseWriter, r *http.Request) {
		n.End(r.PathValue("namespace"), r.PathValue("name"))
		reply(w, struct{}{}, nil)
	})
}

// decode reads a JSON body into v (an empty body leaves v zero); on a
// malformed one it answers 400 and returns false.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return true
	}
	reply(w, nil, fmt.Errorf("%w: the body is not the JSON object expected: %v", ErrBadRequest, err))
	return false
}

// reply writes v as JSON, or err as {"error": ...} with its status.
func reply(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err == nil {
		_ = json.NewEncoder(w).Encode(v)
		return
	}
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrUnknownPod), errors.Is(err, ErrNoAction):
		code = http.StatusNotFound
	case errors.Is(err, ErrActionRunning):
		code = http.StatusConflict
	case errors.Is(err, ErrBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code = http.StatusServiceUnavailable
	}
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
