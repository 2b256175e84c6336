package swarm

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxMessage bounds one LSP message body.
const maxMessage = 64 << 20

// WriteMessage writes one LSP base-protocol message: a Content-Length
// header, a blank line and body.
func WriteMessage(w io.Writer, body []byte) error {
	if _, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return fmt.Errorf("writing lsp header: %w", err)
	}
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("writing lsp body: %w", err)
	}
	return nil
}

// ReadMessage reads one LSP base-protocol message and returns its body.
// Header fields other than Content-Length are ignored.
func ReadMessage(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && n < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%w: reading header: %w", ErrLSP, err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%w: malformed header %q", ErrLSP, line)
		}
		if strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			n, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 || n > maxMessage {
				return nil, fmt.Errorf("%w: bad Content-Length %q", ErrLSP, v)
			}
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: message without Content-Length", ErrLSP)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("%w: reading body: %w", ErrLSP, err)
	}
	return body, nil
}
