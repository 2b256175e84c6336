package docker

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/sandboxtest"
)

func TestContract(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T) sandbox.Backend { return newBackend(t, 4<<30) })
}
