package main

import "github.com/tenon-dev/tenon/internal/sandbox/process"

// maybeRunInternal handles the hidden modes the tenon binary is re-executed
// in: libcontainer's init and the in-sandbox executor (the sandbox's pid 1).
// It returns when the process is an ordinary CLI invocation.
func maybeRunInternal() { process.MaybeInit() }
