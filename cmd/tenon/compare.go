package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// compareOpts is one side-by-side replay of a workload under several
// policies, on the same schedule and budget.
type compareOpts struct {
	workflows     []trajectory.Workflow
	policies      []string
	params        map[string]string
	budget        int64
	backend       string
	domain        string
	stateDir      string
	timeScale     float64
	retries       int
	actionTimeout time.Duration
	eventLog      string // JSONL path, "" for none
	label         string // progress prefix, e.g. the bench case
}

// compare replays the workload once per policy, each in a fresh workload
// domain and backend, and returns the comparison. A policy that cannot run
// stops the whole comparison with its error; a cancelled context returns
// what finished so far together with the error.
func compare(ctx context.Context, env *cliEnv, o compareOpts) (*report.Comparison, error) {
	if len(o.policies) == 0 {
		return nil, errors.New("no policy to replay")
	}
	// Build every policy first: a bad name or parameter fails before any work.
	for _, name := range o.policies {
		if _, err := policy.Lookup(name, o.policyOptions(env)); err != nil {
			return nil, err
		}
	}
	var events io.Writer
	if o.eventLog != "" {
		f, err := os.Create(o.eventLog)
		if err != nil {
			return nil, fmt.Errorf("creating event log: %w", err)
		}
		defer f.Close()
		events = f
	}
	if err := os.MkdirAll(o.stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	var results []*replay.Result
	var runErr error
	for _, name := range o.policies {
		res, err := o.replayOne(ctx, env, name, events)
		if res != nil {
			results = append(results, res)
		}
		if err != nil {
			runErr = fmt.Errorf("replaying under %s: %w", name, err)
			break
		}
	}
	if len(results) == 0 {
		return nil, runErr
	}
	return report.Compare(o.workflows, o.budget, o.timeScale, results...), runErr
}

func (o compareOpts) policyOptions(env *cliEnv) policy.Options {
	return policy.Options{Budget: o.budget, Logger: env.log, Params: o.params, Workflows: o.workflows, TimeScale: o.timeScale}
}

func (o compareOpts) policyOptionsIn(env *cliEnv, dir string) policy.Options {
	opts := o.policyOptions(env)
	opts.StateDir = dir
	return opts
}

func (o compareOpts) replayOne(ctx context.Context, env *cliEnv, name string, events io.Writer) (*replay.Result, error) {
	dir, err := os.MkdirTemp(o.stateDir, "run-*")
	if err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	defer os.RemoveAll(dir)
	pol, err := policy.Lookup(name, o.policyOptionsIn(env, dir))
	if err != nil {
		return nil, err
	}
	be, dom, closeBackend, err := openBackend(ctx, o.backend, dir, o.domain, o.budget, env.log)
	if err != nil {
		return nil, err
	}
	defer closeBackend()
	ws := filepath.Join(dir, "workspaces")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return nil, err
	}
	desc := pol.Name()
	if o.label != "" {
		desc = o.label + " " + desc
	}
	bar := progressbar.NewOptions(len(o.workflows),
		progressbar.OptionSetWriter(env.stderr),
		progressbar.OptionSetDescription(fmt.Sprintf("%-24s", desc)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(250*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(env.stderr) }),
	)
	res, err := replay.Run(ctx, replay.Config{
		Workflows: o.workflows, Backend: be, Policy: pol, Budget: o.budget, Domain: dom,
		TimeScale: o.timeScale, MaxRetries: o.retries, ActionTimeout: o.actionTimeout,
		WorkspaceRoot: ws, EventLog: events, Logger: env.log,
		Progress: func(done, _ int) { _ = bar.Set(done) },
	})
	_ = bar.Finish()
	return res, err
}

// writeComparison prints the comparison as a table or JSON and writes the plot.
func writeComparison(env *cliEnv, c *report.Comparison, asJSON bool, plotPath string) error {
	if plotPath != "" {
		if err := writeOutput(env, plotPath, func(w io.Writer) error { return report.WritePlot(w, c) }); err != nil {
			return err
		}
	}
	if asJSON {
		return report.WriteJSON(env.stdout, c)
	}
	if err := report.WriteTable(env.stdout, c); err != nil {
		return err
	}
	if plotPath != "" {
		fmt.Fprintf(env.stdout, "\nplot: %s\n", plotPath)
	}
	return nil
}

// budgetHelp documents the budget flags.
const budgetHelp = "memory budget of the workload domain, e.g. 2GiB (the domain cgroup's limit)"
