package process

import "io"

// capture keeps the first limit bytes read from a stream and counts the
// rest, so a chatty action cannot grow the executor's memory.
type capture struct {
	limit     int
	buf       []byte
	truncated bool
}

// readAll reads r to EOF (or error) into c.
func (c *capture) readAll(r io.Reader) {
	chunk := make([]byte, 32*1024)
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			room := c.limit - len(c.buf)
			if room > n {
				room = n
			}
			if room > 0 {
				c.buf = append(c.buf, chunk[:room]...)
			}
			if n > room {
				c.truncated = true
			}
		}
		if err != nil {
			return
		}
	}
}
