package kube

import (
	"context"
	"net/url"
)

// agent-sandbox's Sandbox API (sigs.k8s.io/agent-sandbox v0.5.6, CRD
// sandboxes.agents.x-k8s.io, storage version v1beta1).
const (
	sandboxesPath = "/apis/agents.x-k8s.io/v1beta1"
	// ModeRunning and ModeSuspended are spec.operatingMode's values.
	// Suspended deletes the Sandbox's pod and keeps its volumes; Running
	// creates the pod again.
	ModeRunning   = "Running"
	ModeSuspended = "Suspended"
	// RestartSafeAnnotation, "true" on a Sandbox, says its agent keeps all
	// it needs between actions on its volumes, so its pod may be deleted
	// while the agent waits. Without it tenon never suspends the Sandbox.
	RestartSafeAnnotation = "tenon.dev/restart-safe"
)

// SandboxRef names a Sandbox.
type SandboxRef struct{ Namespace, Name string }

func (r SandboxRef) String() string { return r.Namespace + "/" + r.Name }

func (r SandboxRef) path() string {
	return sandboxesPath + "/namespaces/" + url.PathEscape(r.Namespace) + "/sandboxes/" + url.PathEscape(r.Name)
}

// Sandbox is the part of an agents.x-k8s.io Sandbox tenon reads.
type Sandbox struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
		OwnerReferences []struct {
			Kind       string `json:"kind"`
			UID        string `json:"uid"`
			Controller *bool  `json:"controller"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		OperatingMode string `json:"operatingMode"`
	} `json:"spec"`
	Status struct {
		NodeName   string `json:"nodeName"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// Ref names the Sandbox.
func (s *Sandbox) Ref() SandboxRef {
	return SandboxRef{Namespace: s.Metadata.Namespace, Name: s.Metadata.Name}
}

// Suspended reports whether its operatingMode is Suspended.
func (s *Sandbox) Suspended() bool { return s.Spec.OperatingMode == ModeSuspended }

// RestartSafe reports whether it carries RestartSafeAnnotation "true".
func (s *Sandbox) RestartSafe() bool { return s.Metadata.Annotations[RestartSafeAnnotation] == "true" }

// Ready reports whether its Ready condition is True (its pod runs).
func (s *Sandbox) Ready() bool { return s.condition("Ready") == "True" }

// condition is the status of its condition typ, "" if absent.
func (s *Sandbox) condition(typ string) string {
	for _, c := range s.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// Claim is the uid of the SandboxClaim that controls it, "" if none
// (agent-sandbox's claim controller adopts a Sandbox by becoming its
// controller owner).
func (s *Sandbox) Claim() string {
	for _, o := range s.Metadata.OwnerReferences {
		if o.Kind == "SandboxClaim" && o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}

// SetSandboxMode sets a Sandbox's spec.operatingMode (ModeRunning or
// ModeSuspended) with a merge patch (RBAC: sandboxes patch).
func (c *Client) SetSandboxMode(ctx context.Context, ref SandboxRef, mode string) error {
	body := map[string]any{"spec": map[string]any{"operatingMode": mode}}
	return c.patch(ctx, ref.path(), body, nil)
}
