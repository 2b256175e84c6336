// Package suspend carries out the suspension broker's decisions on a real
// harness: a cgroup whose tasks are the harness and its persistent
// services (the seed's arena H).
//
// Apply is the actuator: Suspend freezes the group, asks the broker to
// Confirm the decision (no event since it was made, so no tool call in
// flight and none can start from the frozen harness), and only then pages
// every task of the group out; an unconfirmed suspension is thawed at once.
// Prefetch pages the frozen tasks in. Resume pages them in unless they were
// prefetched, then thaws. Calls are serialized, so a Resume that arrives
// during a page-out runs once the page-out is done.
//
// Watch is the timer: it calls the broker's Tick when the grace period of
// an idle harness runs out and applies the Suspend it returns. Decisions
// returned by event methods (Resume, Prefetch) are applied by whoever
// reported the event.
//
// The package freezes, thaws and pages the tasks of the group it is given
// and nothing else; it never kills or moves a task.
package suspend
