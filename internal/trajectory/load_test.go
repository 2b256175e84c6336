package trajectory

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const goodLine = `{"version":1,"id":"w1","arrival_s":0,"actions":[{"wait_s":1,"class":"test","command":"pytest","mem":{"peak_mib":100,"ramp_s":1,"hold_s":2}}]}`

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // exact error text
		wantErr error  // errors.Is target
	}{
		{name: "newer version", in: `{"version":2,"id":"w","actions":[],"new_field":1}`,
			want: "trajectory line 1: version 2 is not supported by this tenon (supports 1); upgrade tenon", wantErr: ErrVersion},
		{name: "missing version", in: `{"id":"w"}`,
			want: `trajectory line 1: version: missing; every line needs "version": 1`, wantErr: ErrVersion},
		{name: "unknown field", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"x","mem":{"peak_mb":5}}]}`,
			want: `trajectory line 1: unknown field "peak_mb"`, wantErr: ErrInvalid},
		{name: "not json", in: "{nope", wantErr: ErrInvalid},
		{name: "two values on a line", in: goodLine + " {}", want: "trajectory line 1: more than one JSON value on the line", wantErr: ErrInvalid},
		{name: "zero peak on line 3", in: goodLine + "\n\n" + strings.Replace(strings.Replace(goodLine, `"w1"`, `"w2"`, 1), `"peak_mib":100`, `"peak_mib":0`, 1),
			want: "trajectory line 3: actions[0].mem.peak_mib: must be > 0", wantErr: ErrInvalid},
		{name: "neither run nor mem", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"x","command":"c"}]}`,
			want: `trajectory line 1: actions[0]: needs exactly one of "run", "mem" and "edit"; has none`, wantErr: ErrInvalid},
		{name: "both run and mem", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"x","run":"true","mem":{"peak_mib":1,"ramp_s":0,"hold_s":0}}]}`,
			want: `trajectory line 1: actions[0]: needs exactly one of "run", "mem" and "edit"; has several`, wantErr: ErrInvalid},
		{name: "run and edit", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"x","run":"true","edit":{"path":"a","old":"x","new":"y"}}]}`,
			want: `trajectory line 1: actions[0]: needs exactly one of "run", "mem" and "edit"; has several`, wantErr: ErrInvalid},
		{name: "edit outside the workspace", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"edit","edit":{"path":"../etc/passwd","old":"x","new":"y"}}]}`,
			want: `trajectory line 1: actions[0].edit.path: "../etc/passwd" must not leave its directory`, wantErr: ErrInvalid},
		{name: "edit of an absolute path", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"edit","edit":{"path":"/etc/passwd","old":"x","new":"y"}}]}`,
			want: `trajectory line 1: actions[0].edit.path: "/etc/passwd" must be relative`, wantErr: ErrInvalid},
		{name: "edit with a hidden climb", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"edit","edit":{"path":"a/../../b","old":"x","new":"y"}}]}`,
			want: `trajectory line 1: actions[0].edit.path: "a/../../b" must be clean`, wantErr: ErrInvalid},
		{name: "edit without old", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"edit","edit":{"path":"a","new":"y"}}]}`,
			want: `trajectory line 1: actions[0].edit.old: must not be empty (or set "write")`, wantErr: ErrInvalid},
		{name: "write with old", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"edit","edit":{"path":"a","old":"x","new":"y","write":true}}]}`,
			want: `trajectory line 1: actions[0].edit: "write" replaces the whole file: no "old" or "replace_all"`, wantErr: ErrInvalid},
		{name: "relative archive", in: `{"version":1,"id":"w","workspace":{"archive":"repo.tar.gz"},"actions":[{"wait_s":0,"class":"x","run":"true"}]}`,
			want: "trajectory line 1: workspace.archive: must be an absolute path", wantErr: ErrInvalid},
		{name: "mount at the root", in: `{"version":1,"id":"w","workspace":{"archive":"/r.tar","mount":"/"},"actions":[{"wait_s":0,"class":"x","run":"true"}]}`,
			want: `trajectory line 1: workspace.mount: "/" must be a clean absolute path other than /`, wantErr: ErrInvalid},
		{name: "bad env", in: `{"version":1,"id":"w","env":["NOVALUE"],"actions":[{"wait_s":0,"class":"x","run":"true"}]}`,
			want: "trajectory line 1: env[0]: must be KEY=VALUE", wantErr: ErrInvalid},
		{name: "relative bind target", in: `{"version":1,"id":"w","binds":[{"source":"/a","target":"b"}],"actions":[{"wait_s":0,"class":"x","run":"true"}]}`,
			want: `trajectory line 1: binds[0].target: "b" must be a clean absolute path other than /`, wantErr: ErrInvalid},
		{name: "negative wait", in: `{"version":1,"id":"w","actions":[{"wait_s":-1,"class":"x","run":"true"}]}`,
			want: "trajectory line 1: actions[0].wait_s: must be >= 0", wantErr: ErrInvalid},
		{name: "empty class", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"","run":"true"}]}`,
			want: "trajectory line 1: actions[0].class: must not be empty", wantErr: ErrInvalid},
		{name: "retain above peak", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"x","mem":{"peak_mib":1,"ramp_s":0,"hold_s":0,"retain_mib":2}}]}`,
			want: "trajectory line 1: actions[0].mem.retain_mib: must be <= peak_mib (1)", wantErr: ErrInvalid},
		{name: "negative recorded", in: `{"version":1,"id":"w","actions":[{"wait_s":0,"class":"x","run":"true","recorded":{"duration_s":-1,"avg_mib":0,"peak_mib":0}}]}`,
			want: "trajectory line 1: actions[0].recorded.duration_s: must be >= 0", wantErr: ErrInvalid},
		{name: "no actions", in: `{"version":1,"id":"w","actions":[]}`,
			want: "trajectory line 1: actions: must hold at least one action", wantErr: ErrInvalid},
		{name: "empty id", in: `{"version":1,"id":"","actions":[{"wait_s":0,"class":"x","run":"true"}]}`,
			want: "trajectory line 1: id: must not be empty", wantErr: ErrInvalid},
		{name: "duplicate id", in: goodLine + "\n" + goodLine,
			want: `trajectory line 2: id: "w1" repeats the id of line 1`, wantErr: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.in))
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("error = %q\n want %q", err, tt.want)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantErr)
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Errorf("error %v is not a *LineError", err)
			}
		})
	}
}

func TestLoadWriteRoundTrip(t *testing.T) {
	wfs := []Workflow{
		{ID: "a", Arrival: 1.5, Kind: "swe", Image: "img", Actions: []Action{
			{Wait: 2, Class: "test", Command: "pytest -x", Mem: &MemProfile{PeakMiB: 300, RampS: 1, HoldS: 4, RetainMiB: 20, Background: true},
				Recorded: &Recorded{DurationS: 5, AvgMiB: 270, PeakMiB: 300}},
			{Wait: 0, Class: "bash", Command: "ls", Run: "ls", Hints: Hints{Background: true}},
		}},
		{ID: "b", Actions: []Action{{Class: "read", Run: "cat x"}}},
		{ID: "c", Workspace: &Workspace{Archive: "/repos/x.tar.gz", Strip: 1, Mount: "/testbed"},
			Env: []string{"PYTHONPATH=/opt/lib"}, Binds: []Bind{{Source: "/srv/lib", Target: "/opt/lib"}},
			Actions: []Action{
				{Class: "edit", Command: "a/b.py", Edit: &FileEdit{Path: "a/b.py", Old: "x", New: "y", ReplaceAll: true}},
				{Class: "edit", Command: "c.sql", Edit: &FileEdit{Path: "c.sql", New: "select 1", Write: true}},
			}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, wfs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Fatalf("wrote %d lines, want 3:\n%s", n, buf.String())
	}
	if c := strings.Count(buf.String(), `"version":1`); c != 3 {
		t.Errorf("version on %d lines, want every line:\n%s", c, buf.String())
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Actions[0].Mem.RetainMiB != 20 || got[0].Actions[1].Run != "ls" || !got[0].Actions[1].Hints.Background || got[1].Version != Version {
		t.Errorf("round trip = %+v", got)
	}
	want := wfs[2]
	want.Version = Version
	if !reflect.DeepEqual(got[2], want) {
		t.Errorf("workflow with a workspace, binds and edits:\n got %+v\nwant %+v", got[2], wfs[2])
	}
}

func TestWriteRejects(t *testing.T) {
	tests := []struct {
		name string
		wfs  []Workflow
		want string
	}{
		{"invalid", []Workflow{{ID: "a"}}, "trajectory line 1: actions: must hold at least one action"},
		{"duplicate", []Workflow{{ID: "a", Actions: []Action{{Class: "x", Run: "true"}}}, {ID: "a", Actions: []Action{{Class: "x", Run: "true"}}}},
			`trajectory line 2: id: "a" repeats the id of line 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Write(&bytes.Buffer{}, tt.wfs)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Write error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadFileNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(path, []byte(`{"version":3}`), 0o644)
	_, err := LoadFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": trajectory line 1: version 3") {
		t.Errorf("err = %v, want it to start with the path and line", err)
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("LoadFile of a missing file succeeded")
	}
}
