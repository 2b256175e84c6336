// Package kube is the Kubernetes side of tenon's node agent (`tenon node`):
// the actuators the node's decisions reach the control plane through. It
// owns
//   - a small API-server client (client.go): plain REST over net/http with
//     JSON merge patches, configured from the pod's service account
//     (InCluster) or explicitly (Config), so tenon's binary does not carry
//     client-go;
//   - the headroom publisher (Publisher): the node's extended resource
//     tenon.dev/agent-slots, patched on the node's status from a count the
//     node agent computes, and a tenon_node_agent_slots gauge;
//   - residency through agent-sandbox (Residency): it drives
//     internal/kube/suspend's Machine (which asks internal/policy's
//     residency policy) with the agents' boundaries, resume requests and
//     the Sandboxes it watches, and applies its decisions by setting the
//     Sandboxes' spec.operatingMode (agents.x-k8s.io/v1beta1);
//     ResumeHandler is the route of the node agent's API through which a
//     harness asks for its agent back.
//
// It decides nothing itself and touches no cgroup: the number of slots,
// the pressure and the restart-safe verdicts come from the node agent.
package kube
