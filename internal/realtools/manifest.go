package realtools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
)

// ErrManifest is wrapped by every error about manifest.json's content.
var ErrManifest = errors.New("realtools: bad manifest")

// Manifest is manifest.json of the repositories directory.
type Manifest struct {
	DebianPackages []string `json:"debian_packages"`
	Pylib          string   `json:"pylib"`
	Repos          []Repo   `json:"repos"`
}

// Repo is one repository of the manifest.
type Repo struct {
	Name     string `json:"name"` // NAME.tar.gz, prefix NAME/
	Upstream string `json:"upstream"`
	Commit   string `json:"commit"`
	License  string `json:"license"`
	Task     string `json:"task"` // the trace run's task directory
	// Run lists the indices of tool_calls.json entries whose Bash
	// commands run offline.
	Run []int `json:"run"`
	// Sub are [regex, replacement] pairs applied to those commands, in
	// order; the replacement is literal ("$HOME" stays for the shell).
	Sub [][]string `json:"sub,omitempty"`
	// Env is added to every action; "<pylib>" in a value names the pylib
	// directory.
	Env   map[string]string `json:"env,omitempty"`
	Setup []string          `json:"setup,omitempty"`
	Note  string            `json:"note,omitempty"`
}

// LoadManifest reads and checks path (names, run indices, substitutions).
func LoadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrManifest, path, err)
	}
	seen := map[string]bool{}
	for _, r := range m.Repos {
		switch {
		case !safeName.MatchString(r.Name) || seen[r.Name]:
			return nil, fmt.Errorf("%w: repo name %q must be unique and match %s", ErrManifest, r.Name, safeName)
		case !safeName.MatchString(r.Task):
			return nil, fmt.Errorf("%w: repo %s: task %q must match %s", ErrManifest, r.Name, r.Task, safeName)
		}
		seen[r.Name] = true
		for _, i := range r.Run {
			if i < 0 {
				return nil, fmt.Errorf("%w: repo %s: run index %d", ErrManifest, r.Name, i)
			}
		}
		if _, err := r.subs(); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// safeName is what a repository or task name may be: one path component.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

type sub struct {
	re   *regexp.Regexp
	with string
}

func (r Repo) subs() ([]sub, error) {
	out := make([]sub, 0, len(r.Sub))
	for _, s := range r.Sub {
		if len(s) != 2 {
			return nil, fmt.Errorf("%w: repo %s: a substitution is [regex, replacement], got %q", ErrManifest, r.Name, s)
		}
		re, err := regexp.Compile(s[0])
		if err != nil {
			return nil, fmt.Errorf("%w: repo %s: substitution %q: %w", ErrManifest, r.Name, s[0], err)
		}
		out = append(out, sub{re, s[1]})
	}
	return out, nil
}

// Substitute applies the repository's substitutions to a command.
func (r Repo) Substitute(cmd string) (string, error) {
	subs, err := r.subs()
	if err != nil {
		return "", err
	}
	for _, s := range subs {
		cmd = s.re.ReplaceAllLiteralString(cmd, s.with)
	}
	return cmd, nil
}

// mibFigure matches the figures a note gives, e.g. "~75 MiB", "79-93 MiB".
var mibFigure = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*MiB`)

// FigureMiB is the manifest's figure for the task: the largest MiB value
// its note gives for the commands measured here (0 when it gives none).
func (r Repo) FigureMiB() float64 {
	var f float64
	for _, m := range mibFigure.FindAllStringSubmatch(r.Note, -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			f = max(f, v)
		}
	}
	return f
}
