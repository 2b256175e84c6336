package process

import "errors"

// ErrNoPidsController means the host mounts no cgroup pids controller, so
// the per-sandbox process cap (Config.PidsMax) cannot be set.
var ErrNoPidsController = errors.New("process backend: no cgroup pids controller")
