// Package sandboxtest is the contract suite every sandbox.Backend passes:
// Run creates sandboxes through the backend under test and checks exec
// semantics (exit codes, captured and capped output, cwd, env, timeouts that
// kill the whole process tree), the workspace and writable layer, pause and
// resume, stats, isolation (no network unless asked, read-only /usr, own pid
// namespace), starting from a captured writable layer (Spec.RootfsFrom;
// only for backends with WritableLayer(id) and SupportsRootfsFrom() true)
// and the lifecycle errors (ErrNotFound after destroy,
// ErrSandboxDead when init dies).
//
// Backends call it from a live test:
//
//	func TestContract(t *testing.T) {
//		sandboxtest.Run(t, func(t *testing.T) sandbox.Backend { return newBackend(t) })
//	}
//
// newBackend must arrange (t.Cleanup) for the backend to be closed.
//
// A backend that lacks something the contract checks declares it with
// RunWith and Capabilities (the fake: NoPrograms, it runs no real
// programs); every case or step that needs what it lacks is skipped with a
// reason naming it, and the rest still runs: the fake is held to the
// lifecycle, validation, exit-code, timeout and pause semantics.
package sandboxtest
