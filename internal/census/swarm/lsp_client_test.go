package swarm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"
)

// fakeServer answers requests on the server side of two pipes: before
// answering "hover" it sends a workspace/configuration request and waits
// for the client's answer; "fail" gets an error response.
func fakeServer(t *testing.T, in io.Reader, out io.Writer) {
	r := bufio.NewReader(in)
	send := func(m map[string]any) {
		b, _ := json.Marshal(m)
		if err := WriteMessage(out, b); err != nil {
			t.Error(err)
		}
	}
	for {
		body, err := ReadMessage(r)
		if err != nil {
			return
		}
		var m rpcMsg
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("client sent bad json %q", body)
			return
		}
		switch m.Method {
		case "hover":
			send(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "workspace/configuration",
				"params": map[string]any{"items": []any{map[string]any{}, map[string]any{}}}})
			reply, err := ReadMessage(r)
			if err != nil {
				t.Error(err)
				return
			}
			var rm rpcMsg
			_ = json.Unmarshal(reply, &rm)
			if string(rm.ID) != `"srv-1"` || string(rm.Result) != "[null,null]" {
				t.Errorf("client answered configuration with %s", reply)
			}
			send(map[string]any{"jsonrpc": "2.0", "method": "window/logMessage", "params": map[string]any{}})
			send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.ID), "result": map[string]any{"contents": "ok"}})
		case "fail":
			send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.ID), "error": map[string]any{"code": 0, "message": "no identifier found"}})
		}
	}
}

func TestLSPClient(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go fakeServer(t, sr, sw)
	c := newLSPClient(cr, cw)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got struct{ Contents string }
	if err := c.Call(ctx, "hover", map[string]int{"line": 1}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Contents != "ok" {
		t.Errorf("result %+v, want contents ok", got)
	}
	err := c.Call(ctx, "fail", nil, nil)
	var re *ResponseError
	if !errors.As(err, &re) || re.Message != "no identifier found" || !errors.Is(err, ErrLSP) {
		t.Errorf("err = %v, want a ResponseError matching ErrLSP", err)
	}
	sw.Close()
	if err := c.Call(ctx, "other", nil, nil); err == nil || errors.As(err, &re) {
		t.Errorf("call after the server closed: err = %v, want a connection error", err)
	}
}

func TestFuncPosition(t *testing.T) {
	tests := []struct {
		name string
		text string
		want position
	}{
		{name: "function", text: "package p\n\nfunc Foo() {}\n", want: position{Line: 2, Character: 5}},
		{name: "method", text: "package p\n// x\nfunc (r *T) Bar() {}\n", want: position{Line: 2, Character: 12}},
		{name: "no func: package name", text: "// doc\npackage p\n", want: position{Line: 1, Character: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := funcPosition(tt.text); got != tt.want {
				t.Errorf("funcPosition = %+v, want %+v", got, tt.want)
			}
		})
	}
}
