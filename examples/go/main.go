// Command example drives a tenon daemon from Go: it creates an agent,
// seeds its workspace, runs a few actions and reads the status.
//
//	go run ./examples/go [-socket /run/tenon/tenon.sock]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
)

func main() {
	socket := flag.String("socket", "/run/tenon/tenon.sock", "daemon unix socket")
	addr := flag.String("addr", "", "daemon TCP address (uses $TENON_TOKEN)")
	flag.Parse()
	c := client.NewUnix(*socket)
	if *addr != "" {
		c = client.NewTCP(*addr, os.Getenv("TENON_TOKEN"))
	}
	defer c.Close()
	if err := run(context.Background(), c); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, c *client.Client) error {
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"README": "hello\n"}})
	if err != nil {
		return fmt.Errorf("creating agent: %w", err)
	}
	defer c.DeleteAgent(ctx, id)
	for _, cmd := range []string{"cat README", "ls -la", "exit 2"} {
		res, err := c.Exec(ctx, id, api.ExecRequest{Command: cmd, TimeoutS: 30})
		if err != nil {
			return fmt.Errorf("exec %q: %w", cmd, err)
		}
		fmt.Printf("$ %s\nexit %d after %.3fs (queued %.3fs)\n%s%s", cmd, res.ExitCode, res.DurationS, res.QueuedS, res.Stdout, res.Stderr)
	}
	if err := c.PutFile(ctx, id, "notes/todo.txt", []byte("write tests\n")); err != nil {
		return err
	}
	b, err := c.GetFile(ctx, id, "notes/todo.txt")
	if err != nil {
		return err
	}
	fmt.Printf("notes/todo.txt: %q\n", b)
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("policy %s, pressure %s, %d agents\n", st.Policy, st.Pressure, len(st.Agents))
	return nil
}
