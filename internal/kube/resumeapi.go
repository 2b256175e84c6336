package kube

import (
	"encoding/json"
	"net/http"
)

// ResumePattern is the route of ResumeHandler, for the node agent's API
// mux (behind its authentication).
const ResumePattern = "POST /v1/sandboxes/{namespace}/{name}/resume"

// ResumeHandler serves ResumePattern: a harness says its agent is needed
// again. 202 when the Sandbox is this node's (it runs again as soon as the
// pressure allows, Residency.Resume), 404 when this node does not track it
// (its pod runs on another node, or it is not a Sandbox of this cluster).
func ResumeHandler(r *Residency) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ref := SandboxRef{Namespace: req.PathValue("namespace"), Name: req.PathValue("name")}
		w.Header().Set("Content-Type", "application/json")
		if !r.Resume(ref) {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]string{
				"error": "sandbox " + ref.String() + " is not on this node: send the request to the node agent of the node its pod runs on (the Sandbox's status.nodeName)",
			})
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(map[string]string{"sandbox": ref.String(), "status": "resuming"})
	})
}
