package node

import "errors"

// Errors of the harness API (harness.go); the HTTP layer maps each to its
// status.
var (
	// ErrUnknownPod: the pod has no adopted container on this node and no
	// Sandbox tenon suspended here (404).
	ErrUnknownPod = errors.New("node: no agent pod of that name on this node: send the request to the node agent of the node the pod runs on, and mark the pod tenon.dev/agent: \"true\"")
	// ErrActionRunning: the pod's agent already has an action starting or
	// running; end it first (409).
	ErrActionRunning = errors.New("node: an action of this pod is still starting or running: end it (POST .../actions/{id}/done) first")
	// ErrNoAction: no running action of the pod has that id (404).
	ErrNoAction = errors.New("node: no such running action")
	// ErrBadRequest: the request's body is malformed (400).
	ErrBadRequest = errors.New("node: bad request")
)
