package vmtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readCpio parses a newc archive back: name -> mode, and content or target.
func readCpio(t *testing.T, b []byte) (map[string]uint32, map[string]string) {
	t.Helper()
	modes, data := map[string]uint32{}, map[string]string{}
	off := 0
	align := func() { off = (off + 3) &^ 3 }
	for {
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("bad header at %d", off)
		}
		field := func(i int) int {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return int(v)
		}
		mode, size, namesize := field(1), field(6), field(11)
		name := string(b[off+110 : off+110+namesize-1])
		off += 110 + namesize
		align()
		if name == "TRAILER!!!" {
			return modes, data
		}
		modes[name] = uint32(mode)
		data[name] = string(b[off : off+size])
		off += size
		align()
	}
}

func TestArchiveWrite(t *testing.T) {
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte("ELF!x"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := newArchive()
	for _, err := range []error{
		a.file("/usr/bin/tool", 0o755, src),
		a.symlink("bin", "usr/bin"),
		a.bytes("etc/hosts", 0o644, []byte("127.0.0.1 localhost\n")),
		a.chardev("dev/console", 0o600, 5, 1),
		a.dir("tmp", fs.ModeSticky|0o777),
		a.symlink("bin", "usr/bin"), // the same again is fine
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := a.bytes("bin", 0o644, nil); err == nil {
		t.Error("a file over a symlink was accepted")
	}
	var buf bytes.Buffer
	if err := a.write(&buf); err != nil {
		t.Fatal(err)
	}
	modes, data := readCpio(t, buf.Bytes())
	tests := []struct {
		name, path string
		mode       uint32
		data       string
	}{
		{"parent dir made", "usr", 0o040755, ""},
		{"file from host", "usr/bin/tool", 0o100755, "ELF!x"},
		{"symlink", "bin", 0o120777, "usr/bin"},
		{"file from memory", "etc/hosts", 0o100644, "127.0.0.1 localhost\n"},
		{"console", "dev/console", 0o020600, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if modes[tt.path] != tt.mode || data[tt.path] != tt.data {
				t.Errorf("%s: mode %o data %q, want %o %q", tt.path, modes[tt.path], data[tt.path], tt.mode, tt.data)
			}
		})
	}
	if modes["usr/bin"] != 0o040755 {
		t.Errorf("usr/bin: mode %o, want a directory", modes["usr/bin"])
	}
}

func TestHostPathKeepsSymlinks(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "usr/lib/x"), 0o755))
	must(os.WriteFile(filepath.Join(root, "usr/lib/x/libc.so.6"), []byte("libc"), 0o644))
	must(os.Symlink("usr/lib", filepath.Join(root, "lib")))
	must(os.Symlink("x/libc.so.6", filepath.Join(root, "usr/lib/libc.so")))
	a := newArchive()
	must(a.hostPath(filepath.Join(root, "lib/libc.so")))
	r := clean(root)
	want := map[string]string{
		r + "/lib":                 "usr/lib",
		r + "/usr/lib/libc.so":     "x/libc.so.6",
		r + "/usr/lib/x/libc.so.6": "",
	}
	for p, target := range want {
		e, ok := a.entries[p]
		if !ok {
			t.Errorf("%s missing", p)
			continue
		}
		if e.target != target {
			t.Errorf("%s -> %q, want %q", p, e.target, target)
		}
	}
	if e := a.entries[r+"/usr/lib/x/libc.so.6"]; e == nil || e.src != filepath.Join(root, "usr/lib/x/libc.so.6") {
		t.Errorf("libc not copied from the host: %+v", e)
	}
}

func TestParseLdd(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      bool
	}{
		{"glibc", "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n",
			[]string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}, false},
		{"static", "\tstatically linked\n", nil, false},
		{"missing", "\tlibseccomp.so.2 => not found\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLdd(strings.NewReader(tt.in))
			if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
				t.Errorf("parseLdd = %q, %v; want %q, error %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestParseGuestOutput(t *testing.T) {
	in := "boot noise\r\n" + markReady + "\r\nvmtest: kernel 7.2\r\n" +
		markBegin + "a\r\nok a\r\n" + markExit + "a 0\r\n" +
		markBegin + "b\r\n--- FAIL: TestX\r\n" + markExit + "b 1\r\n" +
		markBegin + "c\r\nhalf"
	g, err := parseGuestOutput(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !g.ready || !slices.Equal(g.preface, []string{"boot noise", "vmtest: kernel 7.2"}) {
		t.Errorf("ready %v preface %q", g.ready, g.preface)
	}
	want := []TestResult{
		{Name: "a", Output: "ok a\n", Exit: 0},
		{Name: "b", Output: "--- FAIL: TestX\n", Exit: 1},
		{Name: "c", Output: "half\n", Exit: -1},
	}
	if !slices.Equal(g.tests, want) {
		t.Errorf("tests = %+v, want %+v", g.tests, want)
	}
}

func TestStage2QuotesArgs(t *testing.T) {
	s := stage2([]Test{{Name: "x", Args: []string{"-test.run=^TestA$|it's"}, Env: []string{"K=v w"}}})
	want := `env 'K=v w' ./x.test '-test.run=^TestA$|it'\''s' </dev/null >$out 2>&1`
	if !strings.Contains(s, want) {
		t.Errorf("stage2 lacks %q:\n%s", want, s)
	}
	if !strings.Contains(s, `echo "`+markExit+`x $?"`) {
		t.Errorf("stage2 reports no exit status:\n%s", s)
	}
}

// TestGuestCrashed: an oops or a panic on the guest's console is a crash;
// a test's own failure output is not.
func TestGuestCrashed(t *testing.T) {
	for console, want := range map[string]bool{
		"[ 5.1] Oops: int3: 0000 [#1] SMP NOPTI":                     true,
		"[ 9.0] Kernel panic - not syncing: Attempted to kill init!": true,
		"--- FAIL: TestLiveOOMKill (1.00s)":                          false,
		"":                                                           false,
	} {
		if got := guestCrashed(console); got != want {
			t.Errorf("guestCrashed(%q) = %v, want %v", console, got, want)
		}
	}
}
