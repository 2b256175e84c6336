package kube

import (
	"context"
	"net/url"
	"strconv"
)

// SlotsResource is the node extended resource that counts how many more
// agents the node can take; an agent pod requests one.
const SlotsResource = "tenon.dev/agent-slots"

// PatchNodeSlots sets the node's capacity and allocatable of SlotsResource
// to n with a merge patch of its status (RBAC: nodes/status patch).
func (c *Client) PatchNodeSlots(ctx context.Context, node string, n int) error {
	q := map[string]string{SlotsResource: strconv.Itoa(max(n, 0))}
	body := map[string]any{"status": map[string]any{"capacity": q, "allocatable": q}}
	return c.patch(ctx, "/api/v1/nodes/"+url.PathEscape(node)+"/status", body, nil)
}
