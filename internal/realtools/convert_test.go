package realtools

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

func call(tool string, input map[string]any, result string) Call {
	r, _ := json.Marshal(result)
	return Call{Tool: tool, Input: input, ResultPreview: r}
}

// recorded is the run as agentcgroup imports it: one action per call,
// each after a 2 s wait lasting 1 s with a 500 MiB peak.
func recorded(n int) trajectory.Workflow {
	w := trajectory.Workflow{Version: trajectory.Version, ID: "t"}
	for range n {
		w.Actions = append(w.Actions, trajectory.Action{Wait: 2, Class: "x", Mem: &trajectory.MemProfile{PeakMiB: 500, RampS: 1},
			Recorded: &trajectory.Recorded{DurationS: 1, AvgMiB: 300, PeakMiB: 500}})
	}
	return w
}

var paths = Paths{Archive: "/repos/demo.tar.gz", Pylib: "/repos/pylib"}

func TestConvert(t *testing.T) {
	repo := Repo{Name: "demo", Task: "org__demo-1", Run: []int{1, 5},
		Sub:   [][]string{{"^\\. venv/bin/activate && ", ""}, {"/home/agent", "$HOME"}},
		Env:   map[string]string{"PYTHONPATH": "<pylib>", "LC_ALL": "C"},
		Setup: []string{"python3 setup.py -q egg_info"},
		Note:  "first run 118 MiB, then 64 MiB"}
	calls := []Call{
		call("Read", map[string]any{"file_path": "/testbed/a.py"}, "..."),
		call("Bash", map[string]any{"command": ". venv/bin/activate && python3 -m pytest /home/agent/x"}, "ok"),
		call("Edit", map[string]any{"file_path": "/testbed/a.py", "old_string": "x", "new_string": "y"}, "<tool_use_error>File has not been read yet.</tool_use_error>"),
		call("Edit", map[string]any{"file_path": "/testbed/pkg/a.py", "old_string": "x", "new_string": "y", "replace_all": true}, "The file has been updated."),
		call("Bash", map[string]any{"command": "pip install duckdb"}, "error"),
		call("Bash", map[string]any{"command": "git commit -m 'it''s done'"}, "ok"),
		call("Write", map[string]any{"file_path": "/testbed/new/t.sql", "content": "select 1\n"}, "File created successfully"),
	}
	w, err := Convert(repo, calls, recorded(len(calls)), paths)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID != "org__demo-1" || w.Kind != Kind || !reflect.DeepEqual(w.Workspace, &trajectory.Workspace{Archive: paths.Archive, Strip: 1, Mount: "/testbed"}) {
		t.Errorf("workflow = %+v", w)
	}
	if !reflect.DeepEqual(w.Env, []string{"LC_ALL=C", "PYTHONPATH=" + PylibTarget}) ||
		!reflect.DeepEqual(w.Binds, []trajectory.Bind{{Source: paths.Pylib, Target: PylibTarget}}) {
		t.Errorf("env %q, binds %+v", w.Env, w.Binds)
	}
	type want struct {
		wait           float64
		class, command string
		edit           *trajectory.FileEdit
		peak           float64 // recorded, capped at the note's 118 MiB; -1: none
	}
	wants := []want{
		{0, "install", "python3 setup.py -q egg_info", nil, -1},
		// the Read call before: 2 s wait + 1 s call, then this call's own wait
		{5, "test", "python3 -m pytest $HOME/x", nil, 118},
		// the refused edit is skipped like the Read
		{5, "edit", "/testbed/pkg/a.py", &trajectory.FileEdit{Path: "pkg/a.py", Old: "x", New: "y", ReplaceAll: true}, 118},
		// pip install is not in the run list: skipped
		{5, "bash", "git commit -m 'it''s done'", nil, 118},
		{2, "edit", "/testbed/new/t.sql", &trajectory.FileEdit{Path: "new/t.sql", New: "select 1\n", Write: true}, 118},
	}
	if len(w.Actions) != len(wants) {
		t.Fatalf("%d actions, want %d: %+v", len(w.Actions), len(wants), w.Actions)
	}
	for i, wa := range wants {
		a := w.Actions[i]
		if a.Wait != wa.wait || a.Class != wa.class || a.Command != wa.command || !reflect.DeepEqual(a.Edit, wa.edit) {
			t.Errorf("action %d = wait %g class %s command %q edit %+v; want %+v", i, a.Wait, a.Class, a.Command, a.Edit, wa)
		}
		switch {
		case wa.peak < 0 && a.Recorded != nil:
			t.Errorf("action %d: recorded %+v, want none", i, a.Recorded)
		case wa.peak >= 0 && (a.Recorded == nil || a.Recorded.PeakMiB != wa.peak || a.Recorded.AvgMiB != wa.peak || a.Recorded.DurationS != 1):
			t.Errorf("action %d: recorded %+v, want peak and avg %g over 1 s", i, a.Recorded, wa.peak)
		}
		if a.Edit == nil && a.Run != BashRun(a.Command) {
			t.Errorf("action %d runs %q, want %q", i, a.Run, BashRun(a.Command))
		}
	}
}

func TestConvertRefuses(t *testing.T) {
	edit := func(path string) []Call {
		return []Call{call("Edit", map[string]any{"file_path": path, "old_string": "a", "new_string": "b"}, "updated")}
	}
	tests := []struct {
		name  string
		repo  Repo
		calls []Call
	}{
		{"edit outside /testbed", Repo{Task: "t"}, edit("/etc/passwd")},
		{"edit climbing out", Repo{Task: "t"}, edit("/testbed/../etc/passwd")},
		{"edit of /testbed itself", Repo{Task: "t"}, edit("/testbed/")},
		{"write with a relative path", Repo{Task: "t"}, []Call{call("Write", map[string]any{"file_path": "a.py", "content": "x"}, "created")}},
		{"run index not a Bash call", Repo{Task: "t", Run: []int{0}}, edit("/testbed/a.py")},
		{"run index past the end", Repo{Task: "t", Run: []int{3}}, edit("/testbed/a.py")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if w, err := Convert(tt.repo, tt.calls, recorded(len(tt.calls)), paths); err == nil {
				t.Fatalf("Convert succeeded: %+v", w.Actions)
			}
		})
	}
	if _, err := Convert(Repo{Task: "t"}, edit("/testbed/a.py"), recorded(2), paths); err == nil {
		t.Error("Convert accepted an import that does not hold one action per call")
	}
}

func TestSubstitute(t *testing.T) {
	repo := Repo{Name: "r", Sub: [][]string{{"python3 -m pytest$", "python3 -m pytest --continue-on-collection-errors"}, {"/home/yunwei37", "$HOME"}}}
	for in, want := range map[string]string{
		"python3 -m pytest":                  "python3 -m pytest --continue-on-collection-errors",
		"python3 -m pytest tests/":           "python3 -m pytest tests/",
		"/home/yunwei37/.local/bin/sqlfluff": "$HOME/.local/bin/sqlfluff",
	} {
		if got, err := repo.Substitute(in); err != nil || got != want {
			t.Errorf("Substitute(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := (Repo{Name: "r", Sub: [][]string{{"(", "x"}}}).Substitute("a"); !errors.Is(err, ErrManifest) {
		t.Errorf("bad regex: %v, want ErrManifest", err)
	}
	if _, err := (Repo{Name: "r", Sub: [][]string{{"a"}}}).Substitute("a"); !errors.Is(err, ErrManifest) {
		t.Errorf("a pair of one: %v, want ErrManifest", err)
	}
}

func TestFigureMiB(t *testing.T) {
	for note, want := range map[string]float64{
		"79-93 MiB per run": 93,
		"the full suite: 530 MiB without inactive cache, 928 MiB with all cache; killed at 319/777 MiB": 928,
		"0.9-1.9 GB bursts do not reproduce; 514 tests run at ~67 MiB":                                  67,
		"no figure": 0,
	} {
		if got := (Repo{Note: note}).FigureMiB(); got != want {
			t.Errorf("FigureMiB(%q) = %g, want %g", note, got, want)
		}
	}
}

func TestSetupCommand(t *testing.T) {
	got, err := SetupCommand([]string{
		"python3 setup.py -q egg_info",
		"pip-less editable install: put <workspace>/src on sys.path via a .pth file in $HOME/.local/lib/python3.11/site-packages and a $HOME/.local/bin/sqlfluff script calling sqlfluff.cli.commands:cli",
	}, "/testbed")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{
		"python3 setup.py -q egg_info && mkdir -p $HOME/.local/lib/python3.11/site-packages",
		"echo /testbed/src > $HOME/.local/lib/python3.11/site-packages/tenon-editable.pth",
		`from sqlfluff.cli.commands import cli\nsys.exit(cli())`,
		"> $HOME/.local/bin/sqlfluff && chmod +x $HOME/.local/bin/sqlfluff",
	} {
		if !strings.Contains(got, part) {
			t.Errorf("setup command %q lacks %q", got, part)
		}
	}
	for _, bad := range []string{
		"pip-less editable install: somehow",
		"pip-less editable install: put <workspace>/src;rm on sys.path via a .pth file in /x and a /y script calling m:f",
	} {
		if _, err := SetupCommand([]string{bad}, "/testbed"); !errors.Is(err, ErrManifest) {
			t.Errorf("SetupCommand(%q) = %v, want ErrManifest", bad, err)
		}
	}
}

func TestBashRunQuotes(t *testing.T) {
	got := BashRun(`git commit -m "it's"`)
	if want := `exec timeout -k 5 120 bash -c 'git commit -m "it'\''s"'`; got != want {
		t.Errorf("BashRun = %s, want %s", got, want)
	}
}
