package docker

// capped keeps the first limit bytes written to it and counts the rest.
type capped struct {
	limit     int
	buf       []byte
	truncated bool
}

// Write never fails, so the demultiplexer keeps draining the stream.
func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - len(c.buf)
	if len(p) > room {
		c.truncated = true
		c.buf = append(c.buf, p[:max(room, 0)]...)
	} else {
		c.buf = append(c.buf, p...)
	}
	return len(p), nil
}

// exitCode maps an exec's exit status to ExecResult.ExitCode: -1 for a
// process killed by a signal. The engine reports a signal death as
// 128+signal, which a program exiting with such a status cannot be told
// apart from: statuses 129..192 are taken as signal deaths.
func exitCode(status int, killed bool) int {
	if killed || status > 128 && status <= 128+64 {
		return -1
	}
	return status
}
