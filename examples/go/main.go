// Command example drives a tenon daemon from Go through every endpoint of
// the API: it creates an agent, seeds its workspace, runs a few actions
// around a model wait, reads files, lists and describes agents, reads the
// status, the metrics and a few events, and, when -chat is set and the
// daemon has an --upstream, sends one chat completion through the agent's
// model proxy.
//
//	go run ./examples/go [-socket /run/tenon/tenon.sock] [-chat MODEL]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/controller"
)

func main() {
	socket := flag.String("socket", "/run/tenon/tenon.sock", "daemon unix socket")
	addr := flag.String("addr", "", "daemon TCP address (uses $TENON_TOKEN)")
	chat := flag.String("chat", "", "model name for one chat completion through the model proxy (needs --upstream on the daemon)")
	flag.Parse()
	c := client.NewUnix(*socket)
	if *addr != "" {
		c = client.NewTCP(*addr, os.Getenv("TENON_TOKEN"))
	}
	defer c.Close()
	if err := run(context.Background(), c, *chat); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, c *client.Client, chat string) error {
	// Follow the daemon's events while the example runs.
	evCtx, stopEvents := context.WithCancel(ctx)
	events := make(chan []string, 1)
	go func() { events <- follow(evCtx, c) }()

	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"README": "hello\n"}})
	if err != nil {
		stopEvents()
		return fmt.Errorf("creating agent: %w", err)
	}
	defer c.DeleteAgent(ctx, id)
	for _, cmd := range []string{"cat README", "ls -la", "exit 2"} {
		res, err := c.Exec(ctx, id, api.ExecRequest{Command: cmd, TimeoutS: 30})
		if err != nil {
			stopEvents()
			return fmt.Errorf("exec %q: %w", cmd, err)
		}
		fmt.Printf("$ %s\nexit %d after %.3fs (queued %.3fs)\n%s%s", cmd, res.ExitCode, res.DurationS, res.QueuedS, res.Stdout, res.Stderr)
	}
	err = modelCall(ctx, c, id, chat)
	if err == nil {
		err = files(ctx, c, id)
	}
	if err == nil {
		err = describe(ctx, c, id)
	}
	stopEvents()
	if err != nil {
		return err
	}
	kinds := <-events
	fmt.Printf("%d events while the example ran: %s\n", len(kinds), strings.Join(kinds, " "))
	return nil
}

// modelCall tells the daemon the agent waits on its model: through the
// model proxy when chat names a model, else by announcing the wait.
func modelCall(ctx context.Context, c *client.Client, id, chat string) error {
	fmt.Printf("OpenAI base URL of the agent: %s\n", c.OpenAIBaseURL(id))
	if chat == "" {
		if err := c.Wait(ctx, id, true); err != nil {
			return fmt.Errorf("announcing a model wait: %w", err)
		}
		time.Sleep(100 * time.Millisecond) // the model thinks
		return c.Wait(ctx, id, false)
	}
	body := fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": "Say hi."}]}`, chat)
	rc, err := c.ChatCompletions(ctx, id, []byte(body))
	if err != nil {
		return fmt.Errorf("chat completion: %w", err)
	}
	defer rc.Close()
	answer, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	fmt.Printf("chat completion: %s\n", answer)
	return nil
}

// files writes and reads a workspace file and shows the 404 of a missing one.
func files(ctx context.Context, c *client.Client, id string) error {
	if err := c.PutFile(ctx, id, "notes/todo.txt", []byte("write tests\n")); err != nil {
		return err
	}
	b, err := c.GetFile(ctx, id, "notes/todo.txt")
	if err != nil {
		return err
	}
	fmt.Printf("notes/todo.txt: %q\n", b)
	if _, err := c.GetFile(ctx, id, "notes/missing.txt"); !client.IsStatus(err, http.StatusNotFound) {
		return fmt.Errorf("reading a missing file: %v, want 404", err)
	}
	return nil
}

// describe lists the agents, describes this one and reads the status and
// the daemon's memory metrics.
func describe(ctx context.Context, c *client.Client, id string) error {
	agents, err := c.ListAgents(ctx)
	if err != nil {
		return err
	}
	a, err := c.GetAgent(ctx, id)
	if err != nil {
		return err
	}
	fmt.Printf("%d agents; %s: %s, %d actions, %d bytes\n", len(agents), a.ID, a.State, a.Actions, a.MemBytes)
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("policy %s, pressure %s, %d agents\n", st.Policy, st.Pressure, len(st.Agents))
	m, err := c.Metrics(ctx)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(strings.NewReader(m))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "tenon_") {
			fmt.Printf("metric %s\n", sc.Text())
			break
		}
	}
	return nil
}

// follow returns the kinds of the events the daemon sent until ctx ended.
func follow(ctx context.Context, c *client.Client) []string {
	var kinds []string
	err := c.Events(ctx, func(e controller.Event) error {
		kinds = append(kinds, e.Kind)
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Printf("events: %v", err)
	}
	return kinds
}
