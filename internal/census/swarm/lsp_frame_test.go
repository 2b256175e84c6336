package swarm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadMessage(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr error
	}{
		{name: "one", in: "Content-Length: 2\r\n\r\n{}", want: []string{"{}"}},
		{name: "two back to back", in: "Content-Length: 2\r\n\r\n{}Content-Length: 7\r\n\r\n[1,2,3]", want: []string{"{}", "[1,2,3]"}},
		{name: "extra header and case", in: "content-length:4\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\nnull", want: []string{"null"}},
		{name: "bare newlines", in: "Content-Length: 4\n\ntrue", want: []string{"true"}},
		{name: "multibyte body counts bytes", in: "Content-Length: 4\r\n\r\n\"é\"", want: []string{"\"é\""}},
		{name: "missing length", in: "Content-Type: x\r\n\r\n{}", wantErr: ErrLSP},
		{name: "bad length", in: "Content-Length: -3\r\n\r\n", wantErr: ErrLSP},
		{name: "malformed header", in: "garbage\r\n\r\n", wantErr: ErrLSP},
		{name: "truncated body", in: "Content-Length: 10\r\n\r\n{}", wantErr: ErrLSP},
		{name: "truncated header", in: "Content-Length: 2\r\n", wantErr: ErrLSP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tt.in))
			var got []string
			var err error
			for {
				var b []byte
				b, err = ReadMessage(r)
				if err != nil {
					break
				}
				got = append(got, string(b))
			}
			if tt.wantErr == nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err = %v, want io.EOF after the messages", err)
				}
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteMessage(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMessage(&buf, []byte(`{"id":1}`)); err != nil {
		t.Fatal(err)
	}
	if want := "Content-Length: 8\r\n\r\n{\"id\":1}"; buf.String() != want {
		t.Fatalf("wrote %q, want %q", buf.String(), want)
	}
	b, err := ReadMessage(bufio.NewReader(&buf))
	if err != nil || string(b) != `{"id":1}` {
		t.Errorf("round trip = %q, %v", b, err)
	}
}
