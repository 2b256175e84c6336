package results

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// commitContext matches a line that introduces a commit id: "Commit:", "- commit:",
// "built from commit", "(clean tree, ...)".
var commitContext = regexp.MustCompile(`(?i)commit|\btree\b`)

// hexID matches an abbreviated or full commit id. An id must hold a letter a-f, so
// that plain decimal numbers in a commit line (counts, sizes) are not taken for one.
var hexID = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)

// dirtyWords are the phrases by which a results file says its numbers came from code
// that was not committed.
var dirtyWords = regexp.MustCompile(`(?i)\buncommitted\b|\bworking tree\b|\bdirty tree\b|"dirty":\s*true`)

// commandLine matches a line that names a command: a tenon subcommand (the binary may
// be a renamed build, e.g. /tmp/tenon-r) or go test / go build.
var commandLine = regexp.MustCompile(`\b(tenon[-\w]*|go) (bench|sim|run|replay|harness|census|predict|trace|serve|workload|swap|tool|test|build)\b`)

// mdFacts is what a Markdown results file says about its provenance.
type mdFacts struct {
	commits []string // commit ids in a commit context, in order, without repeats
	dirty   []string // lines that say the results came from uncommitted code
	command bool     // some line names a command
}

// scanMarkdown reads a Markdown results file. A commit id counts when "commit" or
// "tree" is on its line or the line before (a wrapped sentence).
func scanMarkdown(r io.Reader) (mdFacts, error) {
	var f mdFacts
	seen := map[string]bool{}
	prevContext := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		ctx := commitContext.MatchString(line)
		if ctx || prevContext {
			for _, id := range hexID.FindAllString(line, -1) {
				if strings.ContainsAny(id, "abcdef") && !seen[id] {
					seen[id] = true
					f.commits = append(f.commits, id)
				}
			}
		}
		prevContext = ctx
		if dirtyWords.MatchString(line) {
			f.dirty = append(f.dirty, fmt.Sprintf("line %d: %s", n, strings.TrimSpace(line)))
		}
		if commandLine.MatchString(line) {
			f.command = true
		}
	}
	return f, sc.Err()
}

// jsonFacts is what a JSON results file says about its provenance: the "commit",
// "dirty" and "command" keys at any depth (tenon bench writes them under "meta",
// tenon harness at the top level).
type jsonFacts struct {
	commits []string
	dirty   bool
	command bool
}

func scanJSON(r io.Reader) (jsonFacts, error) {
	var v any
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return jsonFacts{}, err
	}
	var f jsonFacts
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch s, _ := x.(string); {
				case k == "commit" && s != "":
					f.commits = append(f.commits, s)
				case k == "dirty" && x == true:
					f.dirty = true
				case k == "command" && s != "":
					f.command = true
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return f, nil
}

// mentions reports whether text names the file name as a whole word: "bench.md"
// is not mentioned by "bench-quick.md" nor by "tenon-bench.md".
func mentions(text, name string) bool {
	re := regexp.MustCompile(`(^|[^\w.-])` + regexp.QuoteMeta(name) + `($|[^\w.-]|\.(\s|$))`)
	return re.MatchString(text)
}
