package policy

import (
	"go/build"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// decisionPackages decide; they must import no backend and no kernel
// interface (STYLE.md, "One decision core, two hosts").
var decisionPackages = []string{"policy", "sim", "admission", "gate", "predict", "kube/suspend"}

// allowedDeps are the only packages of the module that decision packages
// may import (directly or not): other decision packages and plain types.
var allowedDeps = []string{"admission", "clock", "gate", "kube/suspend", "policy", "predict", "sim", "trajectory", "units"}

// TestDecisionPackagesImportNoBackend walks the non-test imports of every
// decision package, as `go list -deps` does, and fails on any package of
// the module outside allowedDeps (a backend, cgroup, the replay driver…)
// and on any dependency outside the standard library.
func TestDecisionPackagesImportNoBackend(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	internal := filepath.Dir(filepath.Dir(file))
	const module = "github.com/tenon-dev/tenon/internal/"
	seen := map[string]bool{}
	var walk func(path, dir, from string)
	walk = func(path, dir, from string) {
		if seen[path] {
			return
		}
		seen[path] = true
		pkg, err := build.Default.Import(path, dir, 0)
		if err != nil {
			t.Fatalf("importing %s (from %s): %v", path, from, err)
		}
		if pkg.Goroot {
			return
		}
		rel, ok := strings.CutPrefix(path, module)
		switch {
		case !ok:
			t.Errorf("%s imports %s, which is not in the standard library", from, path)
			return
		case !slices.Contains(allowedDeps, rel):
			t.Errorf("%s imports %s: decision packages import no backend, kernel interface or driver", from, path)
			return
		}
		for _, imp := range pkg.Imports {
			walk(imp, pkg.Dir, path)
		}
	}
	for _, p := range decisionPackages {
		walk(module+p, filepath.Join(internal, p), "(root)")
	}
	if len(seen) < len(decisionPackages) {
		t.Fatalf("walked %d packages", len(seen))
	}
}
