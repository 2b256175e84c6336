package process

// Proc is a live process of a sandbox, as the host sees it (Backend.Procs).
type Proc struct {
	PID  int    // host pid
	Comm string // /proc/<pid>/comm; "" when unreadable
}
