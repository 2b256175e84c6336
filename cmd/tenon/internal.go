package main

// maybeRunInternal handles the hidden modes the tenon binary is re-executed
// in (the sandbox init, libcontainer's init). It returns when the process is
// an ordinary CLI invocation.
func maybeRunInternal() {}
