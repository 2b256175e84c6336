package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/controller"
)

// Client talks to one tenon daemon. It is safe for concurrent use.
type Client struct {
	base  string // scheme://host, no trailing slash
	token string
	hc    *http.Client
}

// Error is a non-2xx answer from the daemon.
type Error struct {
	Status  int    // HTTP status code
	Message string // the daemon's error text
}

func (e *Error) Error() string { return fmt.Sprintf("tenon: %d %s", e.Status, e.Message) }

// IsStatus reports whether err is an *Error with the given status code.
func IsStatus(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == code
}

// NewUnix returns a client for the daemon listening on the unix socket path.
func NewUnix(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConnsPerHost: 256,
	}
	return &Client{base: "http://tenon", hc: &http.Client{Transport: tr}}
}

// NewTCP returns a client for the daemon at addr ("host:port" or an
// http:// URL) authenticating with token.
func NewTCP(addr, token string) *Client {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	return &Client{base: strings.TrimSuffix(base, "/"), token: token, hc: &http.Client{Transport: tr}}
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// do sends a request and decodes a JSON answer into out (when non-nil).
func (c *Client) do(ctx context.Context, method, path string, body io.Reader, ctype string, out any) error {
	resp, err := c.send(ctx, method, path, body, ctype)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding %s %s answer: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns a 2xx response; other codes become *Error.
func (c *Client) send(ctx context.Context, method, path string, body io.Reader, ctype string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var e api.Error
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return nil, &Error{Status: resp.StatusCode, Message: e.Error}
	}
	return resp, nil
}

func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	return c.do(ctx, method, path, bytes.NewReader(b), "application/json", out)
}

// CreateAgent creates a logical agent and returns its id.
func (c *Client) CreateAgent(ctx context.Context, req api.CreateAgentRequest) (string, error) {
	var out api.CreateAgentResponse
	if err := c.doJSON(ctx, http.MethodPost, "/v1/agents", req, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// ListAgents lists every agent.
func (c *Client) ListAgents(ctx context.Context) ([]api.Agent, error) {
	var out []api.Agent
	return out, c.do(ctx, http.MethodGet, "/v1/agents", nil, "", &out)
}

// GetAgent describes one agent.
func (c *Client) GetAgent(ctx context.Context, id string) (api.Agent, error) {
	var out api.Agent
	return out, c.do(ctx, http.MethodGet, "/v1/agents/"+url.PathEscape(id), nil, "", &out)
}

// DeleteAgent destroys the agent's sandbox and workspace.
func (c *Client) DeleteAgent(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/agents/"+url.PathEscape(id), nil, "", nil)
}

// Exec runs one action in the agent's sandbox and waits for it.
func (c *Client) Exec(ctx context.Context, id string, req api.ExecRequest) (api.ExecResponse, error) {
	var out api.ExecResponse
	return out, c.doJSON(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(id)+"/exec", req, &out)
}

// Wait announces the begin (true) or end (false) of a model wait.
func (c *Client) Wait(ctx context.Context, id string, begin bool) error {
	state := "end"
	if begin {
		state = "begin"
	}
	return c.doJSON(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(id)+"/wait", api.WaitRequest{State: state}, nil)
}

// PutFile writes data at path inside the agent's workspace.
func (c *Client) PutFile(ctx context.Context, id, path string, data []byte) error {
	return c.do(ctx, http.MethodPut, filePath(id, path), bytes.NewReader(data), "application/octet-stream", nil)
}

// GetFile reads path from the agent's workspace.
func (c *Client) GetFile(ctx context.Context, id, path string) ([]byte, error) {
	resp, err := c.send(ctx, http.MethodGet, filePath(id, path), nil, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// filePath escapes the whole path, slashes and dots included, so the
// server receives it as given (and judges it) rather than a cleaned one.
func filePath(id, path string) string {
	return "/v1/agents/" + url.PathEscape(id) + "/files/" + strings.ReplaceAll(url.PathEscape(path), ".", "%2E")
}

// Status returns the domain and agents' status.
func (c *Client) Status(ctx context.Context) (api.Status, error) {
	var out api.Status
	return out, c.do(ctx, http.MethodGet, "/v1/status", nil, "", &out)
}

// Metrics returns the Prometheus text exposition.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	resp, err := c.send(ctx, http.MethodGet, "/metrics", nil, "")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// Events streams controller events to fn until ctx is done, the server
// ends the stream, or fn returns an error (which Events returns).
func (c *Client) Events(ctx context.Context, fn func(controller.Event) error) error {
	resp, err := c.send(ctx, http.MethodGet, "/v1/events", nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e controller.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return fmt.Errorf("decoding event: %w", err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return sc.Err()
}

// OpenAIBaseURL is the base URL an OpenAI-compatible SDK of the agent
// should use (its requests are proxied upstream and mark model waits).
// Only meaningful for TCP clients; pass the tenon token as X-Tenon-Token.
func (c *Client) OpenAIBaseURL(id string) string {
	return c.base + "/v1/agents/" + url.PathEscape(id) + "/openai/v1"
}

// ChatCompletions posts an OpenAI chat-completions body through the
// agent's model proxy and returns the raw answer (an SSE stream when the
// body asks for "stream": true). The caller closes it.
func (c *Client) ChatCompletions(ctx context.Context, id string, body []byte) (io.ReadCloser, error) {
	resp, err := c.send(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(id)+"/openai/v1/chat/completions", bytes.NewReader(body), "application/json")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
