package swarm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// lspClient is a minimal JSON-RPC 2.0 client over an LSP stream. It
// answers every server-to-client request (workspace/configuration,
// window/workDoneProgress/create, ...) with an empty result and drops
// notifications.
type lspClient struct {
	w    io.Writer
	wmu  sync.Mutex
	mu   sync.Mutex
	next int64
	wait map[int64]chan rpcMsg
	done chan struct{}
	err  error
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func newLSPClient(r io.Reader, w io.Writer) *lspClient {
	c := &lspClient{w: w, wait: make(map[int64]chan rpcMsg), done: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(r, 1<<16))
	return c
}

func (c *lspClient) readLoop(r *bufio.Reader) {
	defer close(c.done)
	for {
		body, err := ReadMessage(r)
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		var m rpcMsg
		if err := json.Unmarshal(body, &m); err != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // server request
			c.answer(m)
		case m.Method == "" && len(m.ID) > 0: // response
			var id int64
			if json.Unmarshal(m.ID, &id) != nil {
				continue
			}
			c.mu.Lock()
			ch := c.wait[id]
			delete(c.wait, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// answer replies to a server request: workspace/configuration gets one
// null per item, everything else a null result.
func (c *lspClient) answer(m rpcMsg) {
	result := json.RawMessage("null")
	if m.Method == "workspace/configuration" {
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(m.Params, &p)
		nulls := make([]json.RawMessage, len(p.Items))
		for i := range nulls {
			nulls[i] = json.RawMessage("null")
		}
		result, _ = json.Marshal(nulls)
	}
	_ = c.send(rpcMsg{JSONRPC: "2.0", ID: m.ID, Result: result})
}

func (c *lspClient) send(m rpcMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding lsp message: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return WriteMessage(c.w, b)
}

// Call sends a request and waits for its response; result may be nil.
func (c *lspClient) Call(ctx context.Context, method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encoding %s params: %w", method, err)
	}
	ch := make(chan rpcMsg, 1)
	c.mu.Lock()
	c.next++
	id := c.next
	c.wait[id] = ch
	c.mu.Unlock()
	idb, _ := json.Marshal(id)
	if err := c.send(rpcMsg{JSONRPC: "2.0", ID: idb, Method: method, Params: p}); err != nil {
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return &ResponseError{Method: method, Code: m.Error.Code, Message: m.Error.Message}
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%w: decoding %s result: %w", ErrLSP, method, err)
			}
		}
		return nil
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return fmt.Errorf("%w: %s: connection closed: %v", ErrLSP, method, c.err)
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.wait, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Notify sends a notification.
func (c *lspClient) Notify(method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encoding %s params: %w", method, err)
	}
	return c.send(rpcMsg{JSONRPC: "2.0", Method: method, Params: p})
}

// ResponseError is an error response of the server: the server is alive
// and answered, the request itself failed (e.g. no identifier at the
// position).
type ResponseError struct {
	Method  string
	Code    int
	Message string
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("swarm: language server: %s: %s (code %d)", e.Method, e.Message, e.Code)
}

// Is makes a ResponseError match ErrLSP.
func (e *ResponseError) Is(target error) bool { return target == ErrLSP }
