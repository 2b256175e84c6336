package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/store"
	"github.com/tenon-dev/tenon/internal/units"
)

// daemon is a Serve running over a temporary socket (on the fake backend
// unless its ServeConfig names another).
type daemon struct {
	sock   string
	cancel context.CancelFunc
	done   chan error
	// status and logs are read once Serve returned (slog's handler
	// serializes the daemon's writes).
	status strings.Builder
	logs   bytes.Buffer
}

// startServe runs Serve with cfg (socket, backend, budget and drain filled
// when unset) and waits until its socket accepts connections.
func startServe(t *testing.T, cfg ServeConfig) *daemon {
	t.Helper()
	if cfg.Socket == "" {
		cfg.Socket = filepath.Join(t.TempDir(), "tenon.sock")
	}
	if cfg.Backend == "" {
		cfg.Backend = "fake"
	}
	if cfg.Budget == 0 {
		cfg.Budget = units.GiB
	}
	cfg.Drain = time.Second
	d := &daemon{sock: cfg.Socket, done: make(chan error, 1)}
	cfg.Status = &d.status
	cfg.Log = slog.New(slog.NewTextHandler(&d.logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() { d.done <- Serve(ctx, cfg) }()
	t.Cleanup(func() { d.stop(t) })
	deadline := time.Now().Add(30 * time.Second) // the process backend starts slowly in the VM suite
	for {
		c, err := net.Dial("unix", cfg.Socket)
		if err == nil {
			c.Close()
			return d
		}
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("Serve returned before listening: %v\nlogs:\n%s", err, d.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listener on %s: %v", cfg.Socket, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop cancels the daemon and returns what Serve returned (once).
func (d *daemon) stop(t *testing.T) error {
	t.Helper()
	d.cancel()
	err, ok := <-d.done
	if ok {
		close(d.done)
	}
	return err
}

// TestServe starts the daemon on the fake backend, connects to its socket
// and stops it: it returns without error and removes the socket.
func TestServe(t *testing.T) {
	d := startServe(t, ServeConfig{StateDir: t.TempDir(), Domain: "unused", Policy: "eager"})
	if err := d.stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := os.Stat(d.sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind (%v)", err)
	}
	if !strings.Contains(d.status.String(), "policy eager, backend fake") {
		t.Errorf("status line %q", d.status.String())
	}
}

// TestServeDefaults: the default policy (tenon) starts with no file at
// all, from the calibration's class priors; actions run over the socket
// and their measurements are kept in the state directory; what is off on
// this host (the OOM hold of the simulated domain) is logged at start.
func TestServeDefaults(t *testing.T) {
	state := t.TempDir()
	d := startServe(t, ServeConfig{StateDir: state, Policy: DefaultPolicy()})
	c := client.NewUnix(d.sock)
	defer c.Close()
	ctx := context.Background()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r, err := c.Exec(ctx, id, api.ExecRequest{Command: fmt.Sprintf("echo %d", i)})
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("exec %d: %+v, %v", i, r, err)
		}
	}
	if err := d.stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if s := d.status.String(); !strings.Contains(s, "policy tenon, backend fake") || !strings.Contains(s, "predictor class priors") {
		t.Errorf("status line %q", d.status.String())
	}
	logs := d.logs.String()
	for _, want := range []string{"class priors from the workload calibration", "OOM hold off", "residency off"} {
		if !strings.Contains(logs, want) {
			t.Errorf("start did not log %q:\n%s", want, logs)
		}
	}
	st, err := store.Open(filepath.Join(state, "model", "measurements.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if recs, err := st.Measurements(0); err != nil || len(recs) != 3 {
		t.Errorf("kept %d measurements (%v), want the 3 actions", len(recs), err)
	}
}

// TestServeSecondInstance: a second daemon on the same state directory is
// refused and names the first one's pid; a state directory whose owner
// died (its record left behind) is taken over.
func TestServeSecondInstance(t *testing.T) {
	state := t.TempDir()
	startServe(t, ServeConfig{StateDir: state, Policy: "eager"})
	err := Serve(context.Background(), ServeConfig{Socket: filepath.Join(t.TempDir(), "b.sock"), StateDir: state,
		Policy: "eager", Backend: "fake", Budget: units.GiB})
	var inUse *cgroup.InUseError
	if !errors.As(err, &inUse) || inUse.Owner.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second Serve = %v, want refused naming pid %d", err, os.Getpid())
	}

	stale := t.TempDir()
	rec := fmt.Sprintf(`{"pid": 99999999, "boot_id": "an-earlier-boot", "command": "tenon serve", "since": %q}`, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(stale, "serve.lock"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startServe(t, ServeConfig{StateDir: stale, Policy: "eager"})
	if err := d.stop(t); err != nil {
		t.Fatalf("Serve over a dead owner's state directory: %v", err)
	}
}

// TestServeLoadsSavedModel: a restart starts from the newest model version
// saved in the state directory; --model starts from the file given.
func TestServeLoadsSavedModel(t *testing.T) {
	ex := predict.ExamplesFromRecords([]predict.ActionRecord{measured("w", 0, "ls", 2), measured("w", 1, "pytest", 300)})
	m, err := predict.Train(ex, predict.TrainConfig{Trees: 2, MinLeaf: 1})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	if err := os.MkdirAll(filepath.Join(state, "model"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{1, 2} {
		if err := m.Save(modelPath(filepath.Join(state, "model"), v)); err != nil {
			t.Fatal(err)
		}
	}
	d := startServe(t, ServeConfig{StateDir: state, Policy: "tenon"})
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if logs := d.logs.String(); !strings.Contains(logs, "saved model loaded") || !strings.Contains(logs, "version=2") {
		t.Errorf("restart did not load version 2:\n%s", logs)
	}
	d = startServe(t, ServeConfig{StateDir: t.TempDir(), Policy: "tenon", Model: modelPath(filepath.Join(state, "model"), 1)})
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if logs := d.logs.String(); !strings.Contains(logs, "model file given") {
		t.Errorf("--model not logged:\n%s", logs)
	}
}

// TestServeRestartKeepsLearning: the daemon learns its predictor from its
// own completed actions (a model version trained after RetrainEvery of
// them, in the background) and its agents' model waits; restarted on the
// same state directory it starts from that model, not the class priors,
// and predicts the waits it had learned.
func TestServeRestartKeepsLearning(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	d := startServe(t, ServeConfig{StateDir: state, Policy: "tenon"})
	c := client.NewUnix(d.sock)
	defer c.Close()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range RetrainEvery {
		cmd := "ls"
		if i%2 == 1 {
			cmd = "python -m pytest -x"
		}
		if r, err := c.Exec(ctx, id, api.ExecRequest{Command: cmd}); err != nil || r.ExitCode != 0 {
			t.Fatalf("exec %d: %+v, %v", i, r, err)
		}
		if i%10 == 0 { // an announced model wait
			if err := c.Wait(ctx, id, true); err != nil {
				t.Fatal(err)
			}
			time.Sleep(30 * time.Millisecond)
			if err := c.Wait(ctx, id, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	model := modelPath(filepath.Join(state, "model"), 1)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(model); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no model trained after %d actions:\n%s", RetrainEvery, d.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	before, err := c.GetAgent(ctx, id)
	if err != nil || before.PredictedWaitS <= 0 {
		t.Fatalf("agent before the restart: predicted_wait_s %v (%v), want a learned wait", before.PredictedWaitS, err)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if s := d.status.String(); !strings.Contains(s, "predictor class priors") {
		t.Errorf("first start: status line %q, want the class priors", s)
	}

	d = startServe(t, ServeConfig{StateDir: state, Policy: "tenon"})
	c2 := client.NewUnix(d.sock)
	defer c2.Close()
	after, err := c2.GetAgent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if after.PredictedWaitS != before.PredictedWaitS {
		t.Errorf("after the restart: predicted_wait_s %v, want the learned %v", after.PredictedWaitS, before.PredictedWaitS)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if s := d.status.String(); !strings.Contains(s, "predictor model v1") {
		t.Errorf("restart: status line %q, want the learned model v1", s)
	}
	if logs := d.logs.String(); !strings.Contains(logs, "saved model loaded") || !strings.Contains(logs, "learned model waits loaded") {
		t.Errorf("restart did not log loading the model and the waits:\n%s", logs)
	}
}

func TestServeTCPNeedsToken(t *testing.T) {
	err := Serve(context.Background(), ServeConfig{Listen: "127.0.0.1:0", Backend: "fake", Budget: units.GiB, Policy: "eager"})
	if !errors.Is(err, api.ErrNoToken) {
		t.Fatalf("err %v, want api.ErrNoToken", err)
	}
}

// TestServeParams: policy parameters reach the daemon's policy: a known
// one starts it, an unknown one or a bad value is refused before anything
// is served, naming the parameter.
func TestServeParams(t *testing.T) {
	d := startServe(t, ServeConfig{StateDir: t.TempDir(), Policy: DefaultPolicy(), Params: map[string]string{"cpu-pacing": "off"}})
	if err := d.stop(t); err != nil {
		t.Fatalf("Serve with cpu-pacing=off: %v", err)
	}
	for _, tc := range []struct{ key, val, want string }{
		{"bogus", "1", `unknown parameter "bogus"`},
		{"cpu-pacing", "maybe", `cpu-pacing="maybe"`},
	} {
		sock := filepath.Join(t.TempDir(), "s.sock")
		err := Serve(context.Background(), ServeConfig{Socket: sock, StateDir: t.TempDir(), Policy: DefaultPolicy(), Backend: "fake",
			Budget: units.GiB, Params: map[string]string{tc.key: tc.val}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Serve with %s=%s = %v, want an error naming %s", tc.key, tc.val, err, tc.want)
		}
		if _, serr := os.Stat(sock); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("%s=%s: socket %s exists (%v): something was served", tc.key, tc.val, sock, serr)
		}
	}
}
