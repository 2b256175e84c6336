package api_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
)

// newAgent creates an agent and returns its id and workspace.
func newAgent(t *testing.T, d *daemon) (string, string) {
	t.Helper()
	ctx := context.Background()
	id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.client.GetAgent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return id, a.Workspace
}

// TestFilesRefuseSpecialFiles: a FIFO, a device or a directory in the
// workspace is refused at once (issue 22, finding 7: GET on a FIFO never
// answered and held an OS thread).
func TestFilesRefuseSpecialFiles(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	id, ws := newAgent(t, d)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(ws, "fifolink")); err != nil {
		t.Fatal(err)
	}
	files := "/v1/agents/" + id + "/files/"
	tests := []struct {
		name, method, path, body string
		want                     int
		msg                      string
	}{
		{name: "get fifo", method: "GET", path: "fifo", want: 400, msg: "fifo is a FIFO, not a regular file"},
		{name: "get fifo through a link", method: "GET", path: "fifolink", want: 400, msg: "not a regular file"},
		{name: "put fifo", method: "PUT", path: "fifo", body: "x", want: 400, msg: "fifo is a FIFO, not a regular file"},
		{name: "put fifo through a link", method: "PUT", path: "fifolink", body: "x", want: 400, msg: "not a regular file"},
		{name: "get directory", method: "GET", path: "dir", want: 400, msg: "dir is a directory, not a regular file"},
		{name: "put directory", method: "PUT", path: "dir", body: "x", want: 409, msg: "dir is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var code int
			var msg string
			go func() {
				defer close(done)
				code, msg = rawRequest(t, d, tt.method, files+tt.path, tt.body)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				// Open the FIFO's other end so the stuck request ends.
				f, _ := os.OpenFile(filepath.Join(ws, "fifo"), os.O_RDWR, 0)
				<-done
				f.Close()
				t.Fatalf("%s %s did not answer within 5 s", tt.method, tt.path)
			}
			if code != tt.want || !strings.Contains(msg, tt.msg) {
				t.Errorf("%s %s = %d %q, want %d with %q", tt.method, tt.path, code, msg, tt.want, tt.msg)
			}
		})
	}
	if st, err := os.Lstat(filepath.Join(ws, "fifo")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", st, err)
	}
}

// TestHostileAtomicPut: a PUT over the size limit leaves the old content, and
// concurrent PUTs to one path leave one writer's data whole (issue 22,
// finding 11).
func TestHostileAtomicPut(t *testing.T) {
	const limit = 64 << 10
	d := startDaemon(t, daemonOpts{maxBody: limit})
	ctx := context.Background()
	id, ws := newAgent(t, d)
	if err := d.client.PutFile(ctx, id, "f.txt", []byte("old content")); err != nil {
		t.Fatal(err)
	}
	err := d.client.PutFile(ctx, id, "f.txt", bytes.Repeat([]byte("x"), 2*limit))
	if !client.IsStatus(err, 413) {
		t.Errorf("oversized PUT = %v, want 413", err)
	}
	if b, err := d.client.GetFile(ctx, id, "f.txt"); err != nil || string(b) != "old content" {
		t.Errorf("after an oversized PUT the file is %d bytes (%.20q), %v; want the old content", len(b), b, err)
	}

	const writers = 30
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			data := bytes.Repeat([]byte{byte('A' + i)}, limit-1)
			if err := d.client.PutFile(ctx, id, "f.txt", data); err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	b, err := d.client.GetFile(ctx, id, "f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != limit-1 || len(bytes.Trim(b, string(b[:1]))) != 0 {
		t.Errorf("after %d concurrent PUTs the file is %d bytes mixing writers, want %d bytes of one", writers, len(b), limit-1)
	}
	if names, _ := filepath.Glob(filepath.Join(ws, "*")); len(names) != 1 {
		t.Errorf("workspace holds %v, want only f.txt", names)
	}
	if tmps, _ := filepath.Glob(filepath.Join(ws, ".*")); len(tmps) != 0 {
		t.Errorf("temporary files left behind: %v", tmps)
	}
}

// TestPutFollowsLinksInside: a symlink inside the workspace is written
// through, not replaced.
func TestPutFollowsLinksInside(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	ctx := context.Background()
	id, ws := newAgent(t, d)
	if err := os.MkdirAll(filepath.Join(ws, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("conf/real.cfg", filepath.Join(ws, "link.cfg")); err != nil {
		t.Fatal(err)
	}
	if err := d.client.PutFile(ctx, id, "link.cfg", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "conf", "real.cfg")); err != nil || string(b) != "v2" {
		t.Errorf("link target = %q, %v; want v2", b, err)
	}
	if st, err := os.Lstat(filepath.Join(ws, "link.cfg")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v, %v", st, err)
	}
}
