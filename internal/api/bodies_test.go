package api_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
)

// TestHostileLargeBodies reproduces issue 22's finding 10 with bodies
// small enough for a test: while one large body is in flight and takes
// the whole BodyMemory (twice MaxBodyBytes here), another large request is
// answered 503 at once, a small one passes, and once the first ends the
// large one passes too. The daemon reports its own memory.
func TestHostileLargeBodies(t *testing.T) {
	d := startDaemon(t, daemonOpts{maxBody: 2 << 20, bodyMemory: 4 << 20})
	c := d.client
	ctx := context.Background()

	// A client that announces 2 MiB and sends a few bytes holds its share.
	conn, err := net.Dial("unix", d.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/agents HTTP/1.1\r\nHost: tenon\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"files\":{\"a\":\"", 2<<20)
	big := api.CreateAgentRequest{Files: map[string]string{"big": strings.Repeat("x", 3<<19)}}
	waitFor(t, func() bool {
		_, err := c.CreateAgent(ctx, big)
		return client.IsStatus(err, 503) && strings.Contains(err.Error(), "too many large request bodies")
	})
	if _, err := c.CreateAgent(ctx, api.CreateAgentRequest{}); err != nil {
		t.Errorf("small create while a large body is in flight = %v, want it served", err)
	}
	conn.Close()
	waitFor(t, func() bool { _, err := c.CreateAgent(ctx, big); return err == nil })

	st, err := c.Status(ctx)
	if err != nil || st.DaemonMemory <= 0 {
		t.Errorf("status daemon_memory_bytes = %d, %v; want > 0", st.DaemonMemory, err)
	}
	m, err := c.Metrics(ctx)
	if err != nil || !strings.Contains(m, "tenon_daemon_memory_bytes ") {
		t.Errorf("metrics lack tenon_daemon_memory_bytes: %v", err)
	}
}
