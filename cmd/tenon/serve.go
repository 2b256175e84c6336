package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "serve", summary: "run the daemon: an HTTP API for agent harnesses over a unix socket", run: runServe})
}

const defaultSocket = "/run/tenon/tenon.sock"

// defaultPolicy is "tenon" when that policy is registered, else "gate".
func defaultPolicy() string {
	if slices.Contains(policy.Names(), "tenon") {
		return "tenon"
	}
	return "gate"
}

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "serve", "",
		"Run the tenon daemon: agents, actions, files, status, events and metrics over HTTP/JSON.",
		`The API listens on a unix socket (mode 0600). --listen adds a TCP listener, which
requires a bearer token (--token or TENON_TOKEN). See docs/api.md.
SIGTERM or Ctrl-C stops accepting requests, waits for running actions up to
--drain-timeout, releases every sandbox and keeps the agent registry for the next start.`)
	socket := fs.String("socket", defaultSocket, "unix socket path")
	listen := fs.String("listen", "", "also listen on TCP, e.g. 127.0.0.1:7878 (needs a token)")
	token := fs.String("token", os.Getenv("TENON_TOKEN"), "bearer token for TCP clients (default $TENON_TOKEN)")
	stateDir := fs.String("state-dir", "/var/lib/tenon", "agent registry and workspaces")
	budget := units.Size(4 * units.GiB)
	fs.Var(&budget, "budget", "memory budget of the workload domain, e.g. 4GiB")
	domain := fs.String("domain", "tenon", "name of the workload domain cgroup")
	pol := fs.String("policy", defaultPolicy(), "policy: "+fmt.Sprint(policy.Names()))
	backend := fs.String("backend", "process", "sandbox backend: "+backendNames)
	upstream := fs.String("upstream", "", "OpenAI-compatible base URL the model proxy forwards to, e.g. http://127.0.0.1:8000/v1")
	upstreamKey := fs.String("upstream-key", os.Getenv("TENON_UPSTREAM_KEY"), "API key sent upstream (default $TENON_UPSTREAM_KEY)")
	drain := fs.Duration("drain-timeout", 60*time.Second, "how long shutdown waits for running actions")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(env.stderr, "tenon serve: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if *listen != "" && *token == "" {
		return api.ErrNoToken
	}
	log := env.log
	be, dom, closeBackend, err := openBackend(ctx, *backend, *stateDir, *domain, int64(budget), log)
	if err != nil {
		return err
	}
	defer closeBackend()
	cfg, err := policy.Resolve(*pol, policy.Options{Budget: int64(budget)})
	if err != nil {
		return err
	}
	p, err := livePolicy(cfg, "", 1, log)
	if err != nil {
		return err
	}
	srv, err := api.New(ctx, api.Config{
		StateDir: *stateDir, Backend: be, Policy: p, Budget: int64(budget), Domain: dom, Logger: log,
		Token: *token, Upstream: *upstream, UpstreamKey: *upstreamKey,
	})
	if err != nil {
		return err
	}
	lns := []net.Listener{}
	ln, err := api.ListenUnix(*socket)
	if err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	defer os.Remove(*socket)
	lns = append(lns, ln)
	if *listen != "" {
		tl, err := net.Listen("tcp", *listen)
		if err != nil {
			_ = srv.Shutdown(context.Background())
			return fmt.Errorf("listening on %s: %w", *listen, err)
		}
		lns = append(lns, tl)
	}
	errc := make(chan error, len(lns))
	for _, l := range lns {
		go func() { errc <- srv.Serve(l) }()
	}
	fmt.Fprintf(env.stderr, "tenon serve: policy %s, backend %s, budget %s, socket %s", p.Name(), be.Name(), units.FormatSize(int64(budget)), *socket)
	if *listen != "" {
		fmt.Fprintf(env.stderr, ", tcp %s", *listen)
	}
	fmt.Fprintln(env.stderr)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *drain)
	defer cancel()
	err = srv.Shutdown(sctx)
	return errors.Join(serveErr, err)
}
