package sandbox

// Proc is a live task of a sandbox as the host sees it: what a backend's
// Procs method lists (the processes an action left running, init tasks
// excluded).
type Proc struct {
	PID  int    // host pid
	Comm string // <proc root>/<pid>/comm; "" when unreadable
}
