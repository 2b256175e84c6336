package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	inFlight := func() int64 {
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.BodyMemory
	}
	waitFor(t, func() bool { return inFlight() == 4<<20 })
	m, err := c.Metrics(ctx)
	if v, ok := metricValue(m, "tenon_body_memory_bytes"); err != nil || !ok || v != 4<<20 {
		t.Errorf("metrics: tenon_body_memory_bytes = %v (found %v), %v; want %d", v, ok, err, 4<<20)
	}
	big := api.CreateAgentRequest{Files: map[string]string{"big": strings.Repeat("x", 3<<19)}}
	// The daemon answers 503 without reading the body: the client may
	// see its write cut instead of the answer, and sends again.
	var last error
	for range 20 {
		if _, last = c.CreateAgent(ctx, big); client.IsStatus(last, 503) {
			break
		}
	}
	if !client.IsStatus(last, 503) || !strings.Contains(last.Error(), "too many large request bodies") {
		t.Fatalf("large create while a large body is in flight = %v, want 503 too many large request bodies", last)
	}
	if _, err := c.CreateAgent(ctx, api.CreateAgentRequest{}); err != nil {
		t.Errorf("small create while a large body is in flight = %v, want it served", err)
	}
	conn.Close()
	waitFor(t, func() bool { return inFlight() == 0 })
	if _, err := c.CreateAgent(ctx, big); err != nil {
		t.Errorf("large create once the held body ended = %v, want it served", err)
	}

	st, err := c.Status(ctx)
	if err != nil || st.DaemonMemory <= 0 {
		t.Errorf("status daemon_memory_bytes = %d, %v; want > 0", st.DaemonMemory, err)
	}
	m, err = c.Metrics(ctx)
	if err != nil || !strings.Contains(m, "tenon_daemon_memory_bytes ") {
		t.Errorf("metrics lack tenon_daemon_memory_bytes: %v", err)
	}
}

// metricValue is the value of the unlabelled metric name in a
// Prometheus text exposition.
func metricValue(text, name string) (float64, bool) {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// fill is an endless reader of one byte: large bodies are streamed, never
// held by the test, so the memory measured is the daemon's.
type fill byte

func (b fill) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// bigBody is prefix, n bytes of 'x', then suffix.
func bigBody(prefix string, n int64, suffix string) io.Reader {
	return io.MultiReader(strings.NewReader(prefix), io.LimitReader(fill('x'), n), strings.NewReader(suffix))
}

// unixHTTP is a plain HTTP client over the daemon's socket, for requests
// the typed client does not make (streamed bodies, no Content-Length).
func unixHTTP(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dialUnix(ctx, socket) },
	}}
}

// memPeak samples what the process holds from the operating system (as
// status's daemon_memory_bytes counts it) every millisecond until stop is
// called, which returns the peak growth over the level at the start.
func memPeak() (stop func() int64) {
	runtime.GC()
	debug.FreeOSMemory()
	read := func() int64 {
		sm := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		metrics.Read(sm)
		return int64(sm[0].Value.Uint64() - sm[1].Value.Uint64())
	}
	base := read()
	var peak atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return peak.Load() - base
	}
}

// TestHostileBodiesOverLimit sends bodies past the default limit (64 MiB)
// to every endpoint that takes one, with and without a Content-Length:
// each is answered 413 saying the limit, nothing is created or written
// (the file keeps its old content, no temporary file is left), the daemon
// serves on, and its memory grows by far less than what was sent.
func TestHostileBodiesOverLimit(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	c, hc := d.client, unixHTTP(d.socket)
	ctx := context.Background()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"f": "old"}})
	if err != nil {
		t.Fatal(err)
	}
	const over = 80 << 20 // past the 64 MiB default
	agent := "/v1/agents/" + id
	cases := []struct {
		name, method, path, prefix, suffix string
		chunked                            bool
	}{
		{"create", "POST", "/v1/agents", `{"files":{"a":"`, `"}}`, false},
		{"exec", "POST", agent + "/exec", `{"command":"echo `, `"}`, false},
		{"put", "PUT", agent + "/files/f", "", "", false},
		{"create, chunked", "POST", "/v1/agents", `{"files":{"a":"`, `"}}`, true},
		{"exec, chunked", "POST", agent + "/exec", `{"command":"echo `, `"}`, true},
		{"put, chunked", "PUT", agent + "/files/f", "", "", true},
	}
	peak := memPeak()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, tc.method, "http://tenon"+tc.path, bigBody(tc.prefix, over, tc.suffix))
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = int64(len(tc.prefix) + over + len(tc.suffix))
			if tc.chunked {
				req.ContentLength = -1
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%s %s with %d bytes: %v, want a 413 answer", tc.method, tc.path, over, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "larger than 67108864 bytes") {
				t.Errorf("%s %s with %d bytes = %d %s, want 413 naming the limit", tc.method, tc.path, over, resp.StatusCode, b)
			}
		})
	}
	grown := peak()
	if grown > 200<<20 {
		t.Errorf("daemon memory grew by %d MiB while refusing %d bodies of %d MiB, want well under what was sent", grown>>20, len(cases), over>>20)
	}
	t.Logf("daemon memory peak growth %d MiB for %d bodies of %d MiB", grown>>20, len(cases), over>>20)
	if ags, err := c.ListAgents(ctx); err != nil || len(ags) != 1 {
		t.Errorf("agents after the refused creates: %d, %v; want the first alone", len(ags), err)
	}
	if b, err := c.GetFile(ctx, id, "f"); err != nil || string(b) != "old" {
		t.Errorf("file after refused PUTs = %q, %v; want the old content", b, err)
	}
	ents, _ := os.ReadDir(filepath.Join(d.state, "workspaces", id))
	for _, e := range ents {
		if e.Name() != "f" {
			t.Errorf("workspace holds %s after refused PUTs, want f alone", e.Name())
		}
	}
	if r, err := c.Exec(ctx, id, api.ExecRequest{Command: "echo ok"}); err != nil || r.ExitCode != 0 {
		t.Errorf("exec after the large bodies = %+v, %v", r, err)
	}
}

// TestHostileBodiesConcurrent is finding 10's reproduction scaled down: 24
// concurrent exec requests with 8 MiB commands (under the 10 MiB limit
// here), BodyMemory 40 MiB. Each is served or answered 503 with
// Retry-After at once; retried, all complete; the daemon's memory grows by
// far less than the 24 bodies (and their decoded copies) would take, and
// it keeps no command in full after its action.
func TestHostileBodiesConcurrent(t *testing.T) {
	d := startDaemon(t, daemonOpts{maxBody: 10 << 20, bodyMemory: 40 << 20})
	c, hc := d.client, unixHTTP(d.socket)
	ctx := context.Background()
	const n, size = 24, 8 << 20
	ids := make([]string, n)
	for i := range ids {
		id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	peak := memPeak()
	var busy atomic.Int64
	errs := make(chan error, n)
	for _, id := range ids {
		go func() {
			for {
				prefix, suffix := `{"command":"echo `, `"}`
				req, err := http.NewRequestWithContext(ctx, "POST", "http://tenon/v1/agents/"+id+"/exec", bigBody(prefix, size, suffix))
				if err != nil {
					errs <- err
					return
				}
				req.ContentLength = int64(len(prefix) + size + len(suffix))
				resp, err := hc.Do(req)
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusOK:
					errs <- nil
					return
				case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" &&
					strings.Contains(string(b), "too many large request bodies"):
					busy.Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					errs <- fmt.Errorf("agent %s: %d %s", id, resp.StatusCode, b)
					return
				}
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	runtime.GC()
	retained := peak()
	t.Logf("%d requests of %d MiB: %d answered 503 and retried; peak memory growth %d MiB", n, size>>20, busy.Load(), retained>>20)
	if retained > 192<<20 {
		t.Errorf("daemon memory grew by %d MiB, want well under the %d MiB the bodies and their copies take together", retained>>20, 2*n*size>>20)
	}
	st, err := c.Status(ctx)
	if err != nil || st.Running != 0 {
		t.Fatalf("status after the burst = %+v, %v", st, err)
	}
}
