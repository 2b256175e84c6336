package process

import (
	"path"
	"slices"
	"strings"
)

// smallFile is the largest file `cat FILE` may read and still be trivial.
const smallFile = 64 << 10

// trivialCommands are the commands that run without a scope: they allocate
// little, live briefly and leave nothing behind (cat only of a small file).
var trivialCommands = []string{"ls", "cd", "pwd", "echo", "true", "cat"}

// shells are the interpreters whose `-c TEXT` form trivial looks into.
var shells = []string{"sh", "bash", "dash", "ash"}

// sizeFunc returns the size of the file a command names (relative paths are
// the caller's to resolve); it is trivial's only view of the file system.
type sizeFunc func(name string) (int64, error)

// trivial says whether an action may skip its per-tool memory scope
// (sandbox.ExecRequest.Scoped). argv is either a command ([ls -l]) or a
// shell running text ([/bin/sh -c "cd src && ls"]). The text is trivial
// when it is one or more simple commands joined by && or ;, each one of ls
// (without -R), cd, pwd, echo, true or cat of exactly one file no larger
// than smallFile, with no pipes, redirections, substitutions, globs,
// variables or environment assignments. size may be nil, which makes every
// cat non-trivial (Exec passes nil: the host does not resolve paths inside
// the sandbox). Anything trivial cannot parse is not trivial.
func trivial(argv []string, size sizeFunc) bool {
	if len(argv) == 0 {
		return false
	}
	if len(argv) == 3 && slices.Contains(shells, path.Base(argv[0])) && argv[1] == "-c" {
		words, ok := tokenize(argv[2])
		if !ok {
			return false
		}
		return trivialList(words, size)
	}
	return trivialSimple(append([]string{path.Base(argv[0])}, argv[1:]...), size)
}

// trivialList checks commands separated by the operators "&&" and ";".
func trivialList(words []token, size sizeFunc) bool {
	var cmd []string
	n := 0
	for i, w := range words {
		if w.op {
			if len(cmd) == 0 || !trivialSimple(cmd, size) {
				return false
			}
			n++
			cmd = nil
			if i == len(words)-1 && w.text == "&&" {
				return false
			}
			continue
		}
		cmd = append(cmd, w.text)
	}
	if len(cmd) > 0 {
		if !trivialSimple(cmd, size) {
			return false
		}
		n++
	}
	return n > 0
}

// trivialSimple checks one simple command (its words, name first).
func trivialSimple(cmd []string, size sizeFunc) bool {
	if !slices.Contains(trivialCommands, cmd[0]) {
		return false
	}
	args := cmd[1:]
	switch cmd[0] {
	case "ls":
		for _, a := range args {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "R") || a == "--recursive" {
				return false
			}
		}
	case "cat":
		if len(args) != 1 || strings.HasPrefix(args[0], "-") || size == nil {
			return false
		}
		n, err := size(args[0])
		if err != nil || n < 0 || n > smallFile {
			return false
		}
	}
	return true
}

type token struct {
	text string
	op   bool // "&&" or ";"
}

// tokenize splits shell text into words and the operators && and ;. It
// accepts single quotes and double quotes without $, ` or \ inside, and
// refuses every other shell metacharacter (ok is false).
func tokenize(s string) (words []token, ok bool) {
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, token{text: cur.String()})
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == ';':
			flush()
			words = append(words, token{text: ";", op: true})
		case c == '&':
			if i+1 >= len(s) || s[i+1] != '&' {
				return nil, false
			}
			flush()
			words = append(words, token{text: "&&", op: true})
			i++
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, false
			}
			q := s[i+1 : i+1+end]
			if c == '"' && strings.ContainsAny(q, "$`\\") {
				return nil, false
			}
			cur.WriteString(q)
			inWord = true
			i += end + 1
		case strings.IndexByte("|<>`$(){}[]*?~\\!#=\n\r", c) >= 0:
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, true
}
