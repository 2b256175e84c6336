package hostile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Finding is one of issue 22's findings and the tests that reproduce it,
// each as "<package dir>.<test name>" relative to the module root.
type Finding struct {
	N     int
	What  string
	Tests []string
}

// Suite is the hostile suite, finding by finding.
var Suite = []Finding{
	{1, "forged results", []string{"internal/sandbox/process.TestHostileForgedResults",
		"internal/sandbox/docker.TestHostileDockerForgedResults"}},
	{2, "deadlines enforced from outside; init not ptrace-able", []string{
		"internal/sandbox/process.TestHostilePtraceOfInit", "internal/sandbox/process.TestHostileDeadlineFromOutside",
		"internal/sandbox/docker.TestHostileDockerDeadline"}},
	{3, "fork bomb contained and killed", []string{"internal/sandbox/process.TestHostileForkBomb",
		"internal/sandbox/docker.TestHostileDockerForkBomb", "internal/sandbox/docker.TestHostileDockerLeftovers"}},
	{4, "host secrets (/etc/shadow) not readable", []string{"internal/sandbox/process.TestHostileHostSecrets",
		"internal/sandbox/docker.TestHostileDockerHostSecrets"}},
	{5, "seccomp denies keyrings, namespaces, ptrace, mounts", []string{"internal/sandbox/process.TestHostileSeccomp",
		"internal/sandbox/docker.TestHostileDockerSeccomp"}},
	{6, "disk limit hit with a clear error", []string{
		"internal/sandbox/process.TestHostileDiskLimit", "internal/api.TestHostileDaemonDiskLimits",
		"internal/api.TestHostileDaemonDiskLimitsResidency"}},
	{7, "FIFO refused by the files API", []string{"internal/api.TestHostileDaemon", "internal/api.TestHostileDaemonDocker"}},
	{8, "sandbox kept across a timeout, a hang-up and a relative cwd", []string{"internal/api.TestHostileDaemon",
		"internal/api.TestHostileDaemonDocker"}},
	{9, "recovered agents hold no slot; queued requests time out", []string{
		"internal/api.TestHostileRecoveredAgentsSlots", "internal/api.TestHostileQueueDeadline"}},
	{10, "large bodies bounded; daemon memory reported", []string{"internal/api.TestHostileLargeBodies",
		"internal/api.TestHostileBodiesOverLimit", "internal/api.TestHostileBodiesConcurrent", "internal/api.TestHostileLargeOutput"}},
	{11, "atomic file writes", []string{"internal/api.TestHostileAtomicPut"}},
	{12, "precise 4xx for bad requests", []string{"internal/api.TestHostilePreciseErrors", "internal/api.TestHostileDaemon",
		"internal/api.TestHostileDaemonDocker"}},
	{13, "no leftovers after kill -9", []string{"internal/sandbox/process.TestHostileKill9Leftovers"}},
	{14, "binary output as stdout_b64", []string{"internal/api.TestHostileDaemon", "internal/api.TestHostileDaemonDocker"}},
}

// hostileTests returns every TestHostile* function of the module's test
// files as "<package dir>.<name>".
func hostileTests(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "TestHostile") {
				out = append(out, filepath.ToSlash(rel)+"."+fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHostileSuiteIndex checks Suite against the tree: findings 1 to 14
// each have a test, every listed test exists, every TestHostile* test is
// listed.
func TestHostileSuiteIndex(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("module root not found above this package: %v", err)
	}
	found := hostileTests(t, root)
	listed := map[string]bool{"internal/hostile.TestHostileSuiteIndex": true}
	for i, f := range Suite {
		if f.N != i+1 || len(f.Tests) == 0 {
			t.Errorf("Suite[%d] = finding %d with %d tests, want finding %d with at least one", i, f.N, len(f.Tests), i+1)
		}
		for _, name := range f.Tests {
			listed[name] = true
			if !slices.Contains(found, name) {
				t.Errorf("finding %d (%s): test %s not found", f.N, f.What, name)
			}
		}
	}
	if len(Suite) != 14 {
		t.Errorf("Suite covers %d findings, want 14", len(Suite))
	}
	for _, name := range found {
		if !listed[name] {
			t.Errorf("%s is not listed in Suite", name)
		}
	}
}
