package vmtest

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// TestResult is what one test binary printed and how it exited.
type TestResult struct {
	Name   string
	Output string // stdout and stderr, interleaved as printed
	// Exit is the binary's exit status; -1 when the guest printed none (it
	// died or timed out while the binary ran, or never reached it).
	Exit int
}

// guestOutput is the test port's content split at the markers.
type guestOutput struct {
	ready   bool     // the guest reached its test runner
	preface []string // the runner's lines before the first test
	tests   []TestResult
}

// parseGuestOutput splits the test port's output. Carriage returns are
// dropped. A test begun but not ended keeps Exit -1.
func parseGuestOutput(r io.Reader) (guestOutput, error) {
	var g guestOutput
	var cur *TestResult
	var out strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == markReady:
			g.ready = true
		case strings.HasPrefix(line, markBegin):
			g.tests = append(g.tests, TestResult{Name: strings.TrimPrefix(line, markBegin), Exit: -1})
			cur = &g.tests[len(g.tests)-1]
			out.Reset()
		case strings.HasPrefix(line, markExit) && cur != nil:
			name, code, _ := strings.Cut(strings.TrimPrefix(line, markExit), " ")
			if n, err := strconv.Atoi(code); err == nil && name == cur.Name {
				cur.Exit = n
			}
			cur.Output = out.String()
			cur = nil
		case cur != nil:
			out.WriteString(line)
			out.WriteByte('\n')
		default:
			g.preface = append(g.preface, line)
		}
	}
	if cur != nil {
		cur.Output = out.String()
	}
	return g, sc.Err()
}
