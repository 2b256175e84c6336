package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "status", summary: "print the daemon's status: pressure, budget, queues, agents", run: runStatus})
}

// clientFlags are the flags naming the daemon to talk to.
type clientFlags struct{ socket, addr, token *string }

func addClientFlags(fs *flag.FlagSet) clientFlags {
	return clientFlags{
		socket: fs.String("socket", defaultSocket, "daemon unix socket"),
		addr:   fs.String("addr", "", "daemon TCP address host:port (instead of the socket)"),
		token:  fs.String("token", os.Getenv("TENON_TOKEN"), "bearer token for --addr (default $TENON_TOKEN)"),
	}
}

func (f clientFlags) client() *client.Client {
	if *f.addr != "" {
		return client.NewTCP(*f.addr, *f.token)
	}
	return client.NewUnix(*f.socket)
}

// explain adds a hint to errors that mean no daemon answered.
func (f clientFlags) explain(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		return err
	}
	where := *f.socket
	if *f.addr != "" {
		where = *f.addr
	}
	return fmt.Errorf("%w (is tenon serve running on %s?)", err, where)
}

func runStatus(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "status", "", "Print the status of a running tenon daemon.", "")
	cf := addClientFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	c := cf.client()
	defer c.Close()
	st, err := c.Status(ctx)
	if err != nil {
		return cf.explain(err)
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	printStatus(env.stdout, st)
	return nil
}

// printStatus writes the status as a summary and an aligned agent table.
func printStatus(w io.Writer, st api.Status) {
	fmt.Fprintf(w, "policy %s  pressure %s  usage %s / %s (%.0f%%)  available %s  charge %s\n",
		st.Policy, st.Pressure, units.FormatSize(st.UsageBytes), units.FormatSize(st.BudgetBytes), 100*st.WaterLevel,
		units.FormatSize(st.AvailableBytes), units.FormatSize(st.ChargeBytes))
	fmt.Fprintf(w, "agents %d (resident %d, paged out %d, absent %d)  running %d  queued agents %d  queued actions %d",
		len(st.Agents), st.Resident, st.PagedOut, st.Absent, st.Running, st.QueuedAgents, st.QueuedActions)
	if st.AgentSlots != nil {
		fmt.Fprintf(w, "  agent slots %d", *st.AgentSlots)
	}
	fmt.Fprintln(w)
	if len(st.Agents) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSTATE\tRESIDENCY\tMEMORY\tQUEUED\tACTIONS\tSANDBOX")
	for _, a := range st.Agents {
		sb := a.Sandbox
		if sb == "" {
			sb = "-"
		}
		res := a.Residency
		if res == "" {
			res = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", a.ID, a.State, res, units.FormatSize(a.MemBytes), a.Queued, a.Actions, sb)
	}
	tw.Flush()
}

// budgetBar draws usage/budget as a bar of width cells.
func budgetBar(usage, budget int64, width int) string {
	n := 0
	if budget > 0 {
		n = int(float64(width) * float64(usage) / float64(budget))
	}
	n = max(0, min(width, n))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}
