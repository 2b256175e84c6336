package api_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
)

// daemon is a server under test listening on a temporary unix socket.
type daemon struct {
	srv    *api.Server
	socket string
	state  string
	client *client.Client
	done   chan error
	stop   func() error
}

type daemonOpts struct {
	policy   string
	state    string // reuse a state dir (restart tests)
	backend  sandbox.Backend
	maxBody  int64
	upstream string
	token    string
	// queueTimeout and slotIdle set Config.QueueTimeout and SlotIdle.
	queueTimeout, slotIdle time.Duration
	workspaceMax           int64        // Config.WorkspaceMax
	bodyMemory             int64        // Config.BodyMemory
	live                   live.Options // the live adapter's options (a residency factory)
	// predictor, when set, is the admission policies' predictor (none is
	// trained: the daemon has no workload).
	predictor predict.Predictor
}

// startDaemon starts a server on a fresh socket; it is shut down at cleanup.
func startDaemon(t *testing.T, o daemonOpts) *daemon {
	t.Helper()
	if o.policy == "" {
		o.policy = "eager"
	}
	if o.state == "" {
		o.state = t.TempDir()
	}
	if o.backend == nil {
		be := fake.New(fake.Options{Budget: 1 << 30, SandboxBytes: 16 << 20})
		t.Cleanup(func() { be.Close() })
		o.backend = be
	}
	p, err := live.Build(o.policy, policy.Options{Budget: 1 << 30, Predictor: o.predictor}, o.live)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(context.Background(), api.Config{
		StateDir: o.state, Backend: o.backend, Policy: p, Budget: 1 << 30,
		Logger: slog.New(slog.DiscardHandler), MaxBodyBytes: o.maxBody, Upstream: o.upstream, Token: o.token,
		QueueTimeout: o.queueTimeout, SlotIdle: o.slotIdle, WorkspaceMax: o.workspaceMax, BodyMemory: o.bodyMemory,
	})
	if err != nil {
		t.Fatalf("api.New: %v", err)
	}
	sockDir, err := os.MkdirTemp("", "tenon-test-api-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s.sock")
	ln, err := api.ListenUnix(sock)
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	d := &daemon{srv: srv, socket: sock, state: o.state, client: client.NewUnix(sock), done: make(chan error, 1)}
	go func() { d.done <- srv.Serve(ln) }()
	stopped := false
	d.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		if serr := <-d.done; serr != nil {
			err = errors.Join(err, serr)
		}
		d.client.Close()
		return err
	}
	t.Cleanup(func() {
		if err := d.stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return d
}

// listenTCP opens a loopback TCP listener.
func listenTCP(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

type netConn = net.Conn

func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}
