// Package api is tenon's serving API: the HTTP/JSON daemon behind
// `tenon serve` that agent harnesses call to create logical agents, run
// actions (shell commands) in their sandboxes under the chosen memory
// policy, move files in and out of their workspaces, announce model waits
// (or have the OpenAI-compatible proxy announce them), and observe the
// workload domain (status, server-sent events, Prometheus metrics).
//
// Every action goes through the policy exactly as the replay driver's
// actions do: AgentReady when the agent is created (in the background; the
// first action waits for it), then per action Sandboxes.Ensure,
// Policy.ActionReady, Backend.Exec, Policy.ActionDone and
// Sandboxes.Boundary; AgentDone and Sandboxes.Release when the agent is
// deleted or the server shuts down.
//
// The agent registry is persisted in a small bbolt database under the state
// directory (registry.go) together with each agent's workspace directory,
// so a restarted server recovers every agent; sandboxes are recreated on
// demand. File access goes through os.Root on the workspace, so no path can
// reach outside it (no "..", no absolute path, no symlink escape).
//
// The wire types live in types.go and are shared with the Go client in
// package api/client. The package owns its listeners, its registry file and
// the workspace directories under the state directory; it never touches
// /sys or /proc itself (the backend and the domain do).
package api
