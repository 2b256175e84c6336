package results

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// howToFix ends every provenance failure: what a results file must do to pass.
const howToFix = "rerun the file's command with a binary built from a committed tree " +
	"(commit first, then `go build -o /tmp/x/tenon ./cmd/tenon`), " +
	"and name that commit (`git rev-parse HEAD`) on a \"Commit:\" line"

// repo is the repository the test runs in, read through git.
type repo struct {
	t    *testing.T
	root string
}

// openRepo finds the repository root, or skips the test where git or the .git
// directory is unavailable, or where the history is shallow (ancestry is unknown).
func openRepo(t *testing.T) repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: cannot check that results name committed trees")
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git work tree (no .git directory, e.g. a source tarball): cannot check that results name committed trees")
	}
	r := repo{t: t, root: strings.TrimSpace(string(out))}
	// A source tree unpacked inside some other repository is not tenon's work tree.
	if _, err := os.Stat(filepath.Join(r.root, "bench", "results")); err != nil {
		t.Skipf("git work tree %s has no bench/results (tenon's sources unpacked inside another repository?): cannot check results", r.root)
	}
	if r.git("rev-parse", "--is-shallow-repository") == "true" {
		t.Skip("shallow clone: cannot check that the commits results name are ancestors of HEAD")
	}
	return r
}

func (r repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.root
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// isAncestor reports whether id names a commit and whether that commit is an
// ancestor of HEAD (or HEAD itself).
func (r repo) isAncestor(id string) (exists, ancestor bool) {
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", id+"^{commit}")
	cmd.Dir = r.root
	if cmd.Run() != nil {
		return false, false
	}
	cmd = exec.Command("git", "merge-base", "--is-ancestor", id, "HEAD")
	cmd.Dir = r.root
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, true
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return true, false
	default:
		r.t.Fatalf("git merge-base --is-ancestor %s HEAD: %v", id, err)
		return true, false
	}
}

// resultsFiles lists dir/*.md (but README.md), *.json and *.png by name.
func resultsFiles(t *testing.T, dir string) (md, js, png []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir(), name == "README.md":
		case strings.HasSuffix(name, ".md"):
			md = append(md, name)
		case strings.HasSuffix(name, ".json"):
			js = append(js, name)
		case strings.HasSuffix(name, ".png"):
			png = append(png, name)
		}
	}
	return md, js, png
}

// TestResultsNameCommittedTrees checks every results file's provenance: it names a
// command and at least one commit, every commit it names is an ancestor of HEAD, and
// it does not say its results came from uncommitted code. A JSON file that carries
// no commit of its own (tenon sim --json, tenon census) is covered by the Markdown
// files that name it, as a PNG is by the Markdown file that embeds it.
func TestResultsNameCommittedTrees(t *testing.T) {
	r := openRepo(t)
	for _, rel := range resultsDirs(t, r) {
		t.Run(filepath.Base(rel), func(t *testing.T) { checkProvenance(t, repo{t: t, root: r.root}, rel) })
	}
}

// resultsDirs returns the directories the checks cover, relative to the
// repository's root: bench/results (the current results) and, when it exists,
// bench/results/archive (earlier measurements and experiments kept for the
// record, with an index of their own), which must name committed trees as well.
func resultsDirs(t *testing.T, r repo) []string {
	t.Helper()
	dirs := []string{"bench/results"}
	archive := "bench/results/archive"
	switch fi, err := os.Stat(filepath.Join(r.root, archive)); {
	case err == nil && fi.IsDir():
		dirs = append(dirs, archive)
	case err == nil:
		t.Fatalf("%s is not a directory: the archive of earlier results must be one", archive)
	case !os.IsNotExist(err):
		t.Fatal(err)
	}
	return dirs
}

func checkProvenance(t *testing.T, r repo, rel string) {
	dir := filepath.Join(r.root, rel)
	mdNames, jsNames, pngNames := resultsFiles(t, dir)
	if len(mdNames) == 0 {
		t.Fatalf("%s holds no results files", dir)
	}

	checked := map[string]bool{} // commit ids already verified
	checkCommits := func(file string, ids []string) {
		for _, id := range ids {
			if checked[id] {
				continue
			}
			exists, ancestor := r.isAncestor(id)
			switch {
			case !exists:
				t.Errorf("%s/%s names commit %s, which is not a commit in this repository: fix the id, or %s", rel, file, id, howToFix)
			case !ancestor:
				t.Errorf("%s/%s names commit %s, which is not an ancestor of HEAD (a commit from another branch, or rewritten history): %s", rel, file, id, howToFix)
			default:
				checked[id] = true
			}
		}
	}

	texts := map[string]string{}
	for _, name := range mdNames {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = string(b)
		f, err := scanMarkdown(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("%s/%s: %v", rel, name, err)
		}
		if len(f.commits) == 0 {
			t.Errorf("%s/%s names no commit: %s", rel, name, howToFix)
		}
		for _, line := range f.dirty {
			t.Errorf("%s/%s says its results came from uncommitted code (%s): %s", rel, name, line, howToFix)
		}
		if !f.command {
			t.Errorf("%s/%s names no command (tenon ..., go test ...): write the command that produced it, as run", rel, name)
		}
		checkCommits(name, f.commits)
	}

	// coveredBy lists the Markdown files that mention a JSON or PNG file.
	coveredBy := func(file string) []string {
		var by []string
		for _, md := range mdNames {
			if mentions(texts[md], file) {
				by = append(by, md)
			}
		}
		return by
	}
	for _, name := range jsNames {
		b, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := scanJSON(b)
		b.Close()
		if err != nil {
			t.Errorf("%s/%s: %v", rel, name, err)
			continue
		}
		if f.dirty {
			t.Errorf("%s/%s says \"dirty\": true (built from uncommitted code): %s", rel, name, howToFix)
		}
		if len(f.commits) > 0 {
			checkCommits(name, f.commits)
			continue
		}
		if by := coveredBy(name); len(by) == 0 {
			t.Errorf("%s/%s names no commit and no Markdown file in %[1]s mentions it: "+
				"write its command and commit in the Markdown file that presents it (or add \"commit\" to the JSON)", rel, name)
		}
	}
	for _, name := range pngNames {
		if by := coveredBy(name); len(by) == 0 {
			t.Errorf("%s/%s is in no Markdown file in %[1]s: embed or name it in the file that presents it, with its command and commit", rel, name)
		}
	}
}

// TestResultsIndex checks that bench/results/README.md (and archive/README.md)
// lists every results file there, so that a new file without an entry (its
// command, commit, date and what it shows) fails.
func TestResultsIndex(t *testing.T) {
	r := openRepo(t)
	for _, rel := range resultsDirs(t, r) {
		t.Run(filepath.Base(rel), func(t *testing.T) { checkIndex(t, repo{t: t, root: r.root}, rel) })
	}
}

func checkIndex(t *testing.T, r repo, rel string) {
	dir := filepath.Join(r.root, rel)
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatalf("%s/README.md, the index of results files: %v", rel, err)
	}
	index := string(b)
	md, js, png := resultsFiles(t, dir)
	all := append(append(md, js...), png...)
	sort.Strings(all)
	for _, name := range all {
		if !mentions(index, name) {
			t.Errorf("%s/%s is not in %[1]s/README.md: add an entry with its command, commit, date (`git log -1 --format=%%ci -- %[1]s/%[2]s`) and one line on what it shows", rel, name)
		}
	}
	for _, target := range linkTargets(index) {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target))); err != nil {
			t.Errorf("%s/README.md links %s, which is not there (moved or renamed?): %v", rel, target, err)
		}
	}
}

// linkTargets returns the targets of the Markdown links [text](target) in
// s that name a file in the repository: relative paths, without a URL
// scheme or a #fragment.
func linkTargets(s string) []string {
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(s, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		out = append(out, target)
	}
	return out
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
