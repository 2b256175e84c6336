package gate

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// denied is an actuator's record of the groups it denied (frozen or
// limited), so that Allow reuses the group it acted on and Close can undo
// every denial. It is safe for concurrent use.
type denied struct {
	resolve Resolver
	mu      sync.Mutex
	groups  map[string]cgroup.Group
}

func newDenied(resolve Resolver) denied {
	return denied{resolve: resolve, groups: make(map[string]cgroup.Group)}
}

// add resolves id and records its group before the denial is applied.
func (d *denied) add(id string) (cgroup.Group, error) {
	g, err := d.resolve(id)
	if err != nil {
		return nil, fmt.Errorf("resolving sandbox %s: %w", id, err)
	}
	d.mu.Lock()
	d.groups[id] = g
	d.mu.Unlock()
	return g, nil
}

// lookup returns the recorded group of id, or resolves it.
func (d *denied) lookup(id string) (cgroup.Group, error) {
	d.mu.Lock()
	g, ok := d.groups[id]
	d.mu.Unlock()
	if ok {
		return g, nil
	}
	g, err := d.resolve(id)
	if err != nil {
		return nil, fmt.Errorf("resolving sandbox %s: %w", id, err)
	}
	return g, nil
}

// remove forgets id once its denial is undone.
func (d *denied) remove(id string) {
	d.mu.Lock()
	delete(d.groups, id)
	d.mu.Unlock()
}

// undoAll calls undo for every recorded group, in ID order, and joins the
// errors.
func (d *denied) undoAll(undo func(id string, g cgroup.Group) error) error {
	d.mu.Lock()
	ids := make([]string, 0, len(d.groups))
	for id := range d.groups {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	slices.Sort(ids)
	var errs []error
	for _, id := range ids {
		d.mu.Lock()
		g, ok := d.groups[id]
		d.mu.Unlock()
		if ok {
			errs = append(errs, undo(id, g))
		}
	}
	return errors.Join(errs...)
}
