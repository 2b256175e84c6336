package docker

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

// ListSandboxes returns the ids of the containers labelled as tenon
// sandboxes of domain (every domain when domain is ""), running or not.
func ListSandboxes(ctx context.Context, cli APIClient, domain string) ([]string, error) {
	f := filters.NewArgs(filters.Arg("label", LabelSandbox+"=1"))
	if domain != "" {
		f.Add("label", LabelDomain+"="+domain)
	}
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, daemonErr(cli, fmt.Errorf("listing sandbox containers: %w", err))
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids, nil
}

// RemoveStale removes every container labelled as a tenon sandbox of
// domain (all domains when ""), e.g. those a crashed run left, with their
// anonymous volumes. It returns how many it removed. Do not call it while a
// Backend of the same domain is running.
func RemoveStale(ctx context.Context, cli APIClient, domain string) (int, error) {
	ids, err := ListSandboxes(ctx, cli, domain)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !client.IsErrNotFound(err) {
			return n, daemonErr(cli, fmt.Errorf("removing stale container %s: %w", id, err))
		}
		n++
	}
	return n, nil
}
