package api_test

import (
	"os"
	"testing"

	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// TestMain serves the process backend's sandbox init: the test binary is
// re-executed as every sandbox's pid 1 in the live tests.
func TestMain(m *testing.M) {
	process.MaybeInit()
	os.Exit(m.Run())
}
