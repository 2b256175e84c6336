package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// Client talks to one API server. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client // requests; watches use it without the timeout
}

// NewClient returns a client for cfg; it checks the CA but sends nothing.
func NewClient(cfg Config) (*Client, error) {
	tc, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return &Client{cfg: cfg, http: &http.Client{Transport: tr}}, nil
}

const mergePatch = "application/merge-patch+json"

// get decodes the object at path into out.
func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, "", nil, out)
}

// patch applies a JSON merge patch to the object at path; out, if not nil,
// receives the patched object.
func (c *Client) patch(ctx context.Context, path string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("kube: encoding patch of %s: %w", path, err)
	}
	return c.do(ctx, http.MethodPatch, path, mergePatch, b, out)
}

func (c *Client) do(ctx context.Context, method, path, ctype string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.send(ctx, method, path, ctype, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return fmt.Errorf("kube: reading %s %s: %w", method, path, err)
	case out != nil && json.Unmarshal(b, out) != nil:
		return fmt.Errorf("kube: %s %s: the answer is not the JSON object expected: %.200s", method, path, b)
	}
	return nil
}

// send sends a request and returns a 2xx response, whose body the caller
// closes; any other status is a *StatusError.
func (c *Client) send(ctx context.Context, method, path, ctype string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.cfg.Server, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("kube: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	tok := c.cfg.Token
	if c.cfg.TokenFile != "" {
		b, err := os.ReadFile(c.cfg.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("kube: reading the bearer token: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kube: %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	se := &StatusError{Method: method, Path: path, Code: resp.StatusCode}
	var st struct{ Reason, Message string }
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		se.Reason, se.Message = st.Reason, st.Message
	} else {
		se.Reason, se.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(b))
	}
	return nil, se
}
