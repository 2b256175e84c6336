package app

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestServe starts the daemon on the fake backend, connects to its socket
// and stops it: it returns without error and removes the socket.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "tenon.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var status strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{Socket: sock, StateDir: filepath.Join(dir, "state"), Budget: units.GiB,
			Domain: "unused", Policy: "eager", Backend: "fake", Drain: time.Second, Status: &status})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Serve returned before listening: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listener on %s: %v", sock, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind (%v)", err)
	}
	if !strings.Contains(status.String(), "policy eager, backend fake") {
		t.Errorf("status line %q", status.String())
	}
}

func TestServeTCPNeedsToken(t *testing.T) {
	err := Serve(context.Background(), ServeConfig{Listen: "127.0.0.1:0", Backend: "fake", Budget: units.GiB, Policy: "eager"})
	if !errors.Is(err, api.ErrNoToken) {
		t.Fatalf("err %v, want api.ErrNoToken", err)
	}
}
