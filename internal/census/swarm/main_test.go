package swarm

import (
	"os"
	"testing"

	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// TestMain lets the test binary serve as a process-backend sandbox's init
// (the sandbox configuration of the live swarm test).
func TestMain(m *testing.M) {
	process.MaybeInit()
	os.Exit(m.Run())
}
