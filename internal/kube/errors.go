package kube

import (
	"errors"
	"fmt"
)

// ErrNotInCluster is returned by InCluster outside a pod: the service
// account's token or the API server's address is missing.
var ErrNotInCluster = errors.New("kube: not running in a pod with a service account (KUBERNETES_SERVICE_HOST unset or no token)")

// StatusError is an API server's answer other than 2xx.
type StatusError struct {
	Method, Path string
	Code         int
	Reason       string // the Status object's reason, e.g. "Forbidden"
	Message      string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("kube: %s %s: %d %s: %s", e.Method, e.Path, e.Code, e.Reason, e.Message)
	if e.Code == 401 || e.Code == 403 {
		msg += " (check the node agent's RBAC: docs/kubernetes.md, Control plane)"
	}
	return msg
}
