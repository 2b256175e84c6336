package predict

import (
	"path"
	"regexp"
	"strings"
	"unicode"
)

// redirections such as 2>&1, >>, < are dropped before splitting; a
// redirection's target file stays as a word.
var redirections = regexp.MustCompile(`[0-9]*(>>?|<)&?[0-9-]*`)

// Tokenize reduces a command to the tokens the TF-IDF features count:
//
//   - "prog:NAME" for each program of a pipeline or command list (the base
//     name, after leading VAR=value assignments and wrappers such as sudo,
//     env, timeout, cd DIR &&),
//   - "sub:NAME WORD" for its first non-flag word argument (a subcommand
//     such as "git diff" or "pip install"), and "mod:NAME" for python -m NAME,
//   - "flag:-x" for flags, without any =value,
//   - "path:SHAPE" for paths reduced to their shape: every directory becomes
//     "dir", the file keeps only its extension ("src/foo/bar.py" becomes
//     "path:dir/dir/*.py", "/testbed/tests/" becomes "path:/dir/dir/"),
//   - "num" for numbers and "word:W" for other words (lower-cased, at most 24
//     bytes).
//
// Quoting is honoured only as far as needed to keep quoted text in one token.
func Tokenize(cmd string) []string {
	var out []string
	for _, seg := range splitSegments(redirections.ReplaceAllString(cmd, " ")) {
		out = appendSegment(out, seg)
	}
	return out
}

var wrappers = map[string]bool{"sudo": true, "env": true, "timeout": true, "nohup": true,
	"time": true, "nice": true, "exec": true, "xargs": true, "command": true}

func appendSegment(out []string, words []string) []string {
	i := 0
	for i < len(words) && isAssignment(words[i]) {
		i++
	}
	for i < len(words) && wrappers[path.Base(words[i])] {
		i++
		for i < len(words) && (strings.HasPrefix(words[i], "-") || isNumber(words[i])) {
			i++ // wrapper options such as "timeout 60" or "env -i"
		}
		for i < len(words) && isAssignment(words[i]) {
			i++
		}
	}
	if i >= len(words) {
		return out
	}
	prog := strings.ToLower(path.Base(words[i]))
	out = append(out, "prog:"+prog)
	sawSub := false
	for j := i + 1; j < len(words); j++ {
		w := words[j]
		switch {
		case strings.HasPrefix(w, "-") && len(w) > 1 && !isNumber(w):
			flag, _, _ := strings.Cut(w, "=")
			out = append(out, "flag:"+truncate(flag))
			if flag == "-m" && j+1 < len(words) {
				out = append(out, "mod:"+truncate(strings.ToLower(words[j+1])))
				j++
				sawSub = true
			}
		case isNumber(w):
			out = append(out, "num")
		case looksLikePath(w):
			out = append(out, "path:"+pathShape(w))
		default:
			lw := truncate(strings.ToLower(w))
			if !sawSub {
				out = append(out, "sub:"+prog+" "+lw)
				sawSub = true
			} else {
				out = append(out, "word:"+lw)
			}
		}
	}
	return out
}

// splitSegments splits a command line into words and breaks it at |, ||, &&,
// ; , & and newlines, keeping quoted text together.
func splitSegments(cmd string) [][]string {
	var segs [][]string
	var words []string
	var cur strings.Builder
	var quote rune
	flushWord := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	flushSeg := func() {
		flushWord()
		if len(words) > 0 {
			segs = append(segs, words)
			words = nil
		}
	}
	for _, r := range cmd {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '|' || r == '&' || r == ';' || r == '\n' || r == '(' || r == ')':
			flushSeg()
		case unicode.IsSpace(r):
			flushWord()
		default:
			cur.WriteRune(r)
		}
	}
	flushSeg()
	return segs
}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

func isNumber(w string) bool {
	w = strings.TrimPrefix(w, "-")
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(unicode.IsDigit(r) || r == '.' || r == 'k' || r == 'K' || r == 'm' || r == 'M' || r == 'g' || r == 'G' || r == 's') {
			return false
		}
	}
	return unicode.IsDigit(rune(w[0]))
}

func looksLikePath(w string) bool {
	if strings.Contains(w, "://") {
		return false
	}
	if strings.ContainsRune(w, '/') {
		return true
	}
	ext := path.Ext(w)
	return len(ext) > 1 && len(ext) <= 6 && len(w) > len(ext)
}

// pathShape reduces a path to its shape, see Tokenize.
func pathShape(p string) string {
	p, _, _ = strings.Cut(p, "::") // pytest node ids
	var b strings.Builder
	if strings.HasPrefix(p, "/") {
		b.WriteByte('/')
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, part := range parts {
		last := i == len(parts)-1
		switch {
		case part == "":
			continue
		case !last || strings.HasSuffix(p, "/"):
			b.WriteString("dir/")
		case strings.ContainsAny(part, "*?"):
			b.WriteString("glob")
		default:
			if ext := path.Ext(part); ext != "" && ext != part {
				b.WriteString("*" + strings.ToLower(truncate(ext)))
			} else {
				b.WriteString("name")
			}
		}
	}
	return b.String()
}

func truncate(s string) string {
	if len(s) > 24 {
		return s[:24]
	}
	return s
}

// Skeleton is the program skeleton of a command: its program, subcommand
// and python module tokens (see Tokenize) in order, without paths, flags or
// words, so that "python -m pytest tests/a.py -k x" and "python -m pytest
// tests/b.py" share one. It is "" for a command of fewer than two tokens: a
// bare tool name (what an importer records when the trace has no command
// text) says nothing about which run of the tool this is.
func Skeleton(cmd string) string {
	toks := Tokenize(cmd)
	if len(toks) < 2 {
		return ""
	}
	var b strings.Builder
	for _, t := range toks {
		if strings.HasPrefix(t, "prog:") || strings.HasPrefix(t, "sub:") || strings.HasPrefix(t, "mod:") {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}
