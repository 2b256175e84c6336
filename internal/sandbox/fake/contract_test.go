package fake

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/sandboxtest"
)

// TestContract runs the shared contract suite on the fake. It runs no real
// programs, so the cases about them skip (Capabilities.NoPrograms); the
// lifecycle, validation, exit-code, timeout and pause cases run.
func TestContract(t *testing.T) {
	sandboxtest.RunWith(t, sandboxtest.Capabilities{NoPrograms: true}, func(t *testing.T) sandbox.Backend {
		b := New(Options{})
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}
