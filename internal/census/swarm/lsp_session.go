package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// fileURI is the file:// URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type textDocPos struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Position position `json:"position"`
	Context  *struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context,omitempty"`
}

// lspSession is a language server session over one workspace root.
type lspSession struct {
	c       *lspClient
	root    string
	version map[string]int
}

// startSession runs initialize/initialized for root (a path as the server
// sees it).
func startSession(ctx context.Context, r io.Reader, w io.Writer, root string) (*lspSession, error) {
	s := &lspSession{c: newLSPClient(r, w), root: root, version: make(map[string]int)}
	params := map[string]any{
		"processId":        nil,
		"rootUri":          fileURI(root),
		"workspaceFolders": []map[string]string{{"uri": fileURI(root), "name": filepath.Base(root)}},
		"capabilities":     map[string]any{},
	}
	if err := s.c.Call(ctx, "initialize", params, nil); err != nil {
		return nil, fmt.Errorf("initializing language server: %w", err)
	}
	if err := s.c.Notify("initialized", map[string]any{}); err != nil {
		return nil, err
	}
	return s, nil
}

// Open sends didOpen for rel (first time) or a full-text didChange.
func (s *lspSession) Open(rel, text string) error {
	uri := fileURI(filepath.Join(s.root, rel))
	v, seen := s.version[rel]
	s.version[rel] = v + 1
	if !seen {
		return s.c.Notify("textDocument/didOpen", map[string]any{
			"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": v + 1, "text": text},
		})
	}
	return s.c.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v + 1},
		"contentChanges": []map[string]string{{"text": text}},
	})
}

// Query asks hover, definition and references at pos of rel. Every
// request is sent even when an earlier one gets an error response; the
// first error is returned.
func (s *lspSession) Query(ctx context.Context, rel string, pos position) error {
	var p textDocPos
	p.TextDocument.URI = fileURI(filepath.Join(s.root, rel))
	p.Position = pos
	var first error
	for _, m := range []string{"textDocument/hover", "textDocument/definition", "textDocument/references"} {
		if m == "textDocument/references" {
			p.Context = &struct {
				IncludeDeclaration bool `json:"includeDeclaration"`
			}{true}
		}
		err := s.c.Call(ctx, m, p, nil)
		var re *ResponseError
		if err != nil && !errors.As(err, &re) {
			return err // the connection or ctx failed
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// Close asks the server to shut down and exit.
func (s *lspSession) Close(ctx context.Context) error {
	err := s.c.Call(ctx, "shutdown", nil, nil)
	_ = s.c.Notify("exit", nil)
	return err
}

// funcPosition returns the position of the first function name declared
// in text (line and UTF-16 column equal byte column for ASCII source), or
// of the package name when there is none.
func funcPosition(text string) position {
	pkg := position{}
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "package ") && pkg == (position{}) {
			pkg = position{Line: i, Character: 8}
		}
		if rest, ok := strings.CutPrefix(line, "func "); ok {
			col := 5
			if strings.HasPrefix(rest, "(") { // method: skip the receiver
				if j := strings.Index(rest, ") "); j >= 0 {
					col += j + 2
				}
			}
			return position{Line: i, Character: col}
		}
	}
	return pkg
}
