//go:build linux

package process

import (
	"fmt"
	"os"
	"runtime"

	"github.com/opencontainers/runc/libcontainer"
	// nsenter's C constructor performs the namespace setup of libcontainer's
	// "init" re-exec before the Go runtime starts.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// init keeps the main goroutine on the main thread for the life of the
// program. libcontainer joins each new container's mount namespace from a
// goroutine locked to its thread and lets the thread die afterwards; Go
// cannot end the main thread and parks it instead, so were that goroutine
// to run on the main thread, the process's /proc/self would show the
// container's mount namespace from then on (and keep it alive). Locking
// main here, as the runtime documents for init functions, keeps every other
// goroutine off the main thread.
func init() {
	runtime.LockOSThread()
}

// MaybeInit must be the first call in main of every binary that links this
// package (and in TestMain of its test binaries). When the process was
// started as libcontainer's container bootstrap ("init", with libcontainer's
// environment) it runs libcontainer.Init, which never returns; when started
// as a sandbox's executor (argv[1] == "__sandbox-init") it confines itself
// (no_new_privs and the seccomp filter, which every action inherits), serves
// actions and exits; woken from the idle loop ("__sandbox-wake") it serves
// on, confined already. Otherwise it returns at once.
func MaybeInit() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "init":
		if os.Getenv("_LIBCONTAINER_INITTYPE") != "" {
			libcontainer.Init() // never returns
		}
	case initArg:
		if err := confine(); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox init: %v\n", err)
			os.Exit(1)
		}
		os.Exit(runExecutorChannel(os.Args[2:], false))
	case wakeArg:
		// The idle loop woke this executor: the filter and no_new_privs
		// it installed first are still in force (exec keeps both).
		os.Exit(runExecutorChannel(os.Args[2:], true))
	case idleArg:
		// The idle loop runs in a C constructor before Go starts
		// (idle_linux.go); here it was not built in.
		fmt.Fprintln(os.Stderr, "sandbox init: this tenon has no idle loop (built without cgo)")
		os.Exit(1)
	}
}
