package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// EventType is a watch event's type.
type EventType string

// Watch event types; a list at the start of a watch delivers Added.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// SandboxEvent is a Sandbox seen by WatchSandboxes.
type SandboxEvent struct {
	Type    EventType
	Sandbox *Sandbox
}

// WatchSandboxes lists every Sandbox of the cluster, delivering each as
// Added, then watches them from the list's resource version and delivers
// the changes, until ctx ends or the watch fails (RBAC: sandboxes list,
// watch). The caller retries; a retry lists again.
func (c *Client) WatchSandboxes(ctx context.Context, fn func(SandboxEvent)) error {
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []*Sandbox `json:"items"`
	}
	if err := c.get(ctx, sandboxesPath+"/sandboxes", &list); err != nil {
		return err
	}
	for _, s := range list.Items {
		fn(SandboxEvent{Type: Added, Sandbox: s})
	}
	q := url.Values{"watch": {"1"}, "resourceVersion": {list.Metadata.ResourceVersion}, "allowWatchBookmarks": {"false"}}
	resp, err := c.send(ctx, http.MethodGet, sandboxesPath+"/sandboxes?"+q.Encode(), "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   EventType       `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("kube: watching sandboxes: %w", err)
		}
		switch ev.Type {
		case Added, Modified, Deleted:
			var s Sandbox
			if err := json.Unmarshal(ev.Object, &s); err != nil {
				return fmt.Errorf("kube: decoding a sandbox event: %w", err)
			}
			fn(SandboxEvent{Type: ev.Type, Sandbox: &s})
		case "ERROR": // e.g. 410 Gone: the resource version is too old
			return errors.New("kube: watching sandboxes: the server ended the watch: " + string(ev.Object))
		}
	}
}
