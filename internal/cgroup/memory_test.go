package cgroup

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

const v1Stat = `cache 1048576
rss 4194304
inactive_file 4096
total_cache 2097152
total_rss 8388608
total_inactive_file 3145728
total_active_file 1048576
`

const v2Stat = `anon 8388608
file 2097152
inactive_file 1048576
active_file 1048576
`

func TestMemoryV1(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  MemoryStats
	}{
		{
			name: "limited with swap accounting",
			files: map[string]string{
				"memory.usage_in_bytes": "10485760\n", "memory.stat": v1Stat, "memory.max_usage_in_bytes": "20971520\n",
				"memory.memsw.usage_in_bytes": "11534336\n", "memory.limit_in_bytes": "33554432\n",
				"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "memory.failcnt": "7\n", "memory.memsw.failcnt": "2\n",
			},
			want: MemoryStats{Usage: 10 << 20, WorkingSet: 10<<20 - 3<<20, Peak: 20 << 20, Swap: 1 << 20, Limit: 32 << 20, OOMKills: 3, LimitHits: 9},
		},
		{
			name: "unlimited without memsw, inactive above usage floors at 0",
			files: map[string]string{
				"memory.usage_in_bytes": "1048576\n", "memory.stat": v1Stat, "memory.max_usage_in_bytes": "1048576\n",
				"memory.limit_in_bytes": "9223372036854771712\n", "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\n",
			},
			want: MemoryStats{Usage: 1 << 20, WorkingSet: 0, Peak: 1 << 20, Swap: 0, Limit: -1, OOMKills: 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV1(t)
			g := mustCreate(t, l, "tenon/sb")
			writeFiles(t, g.dirs[Memory], tc.files)
			got, err := g.Memory()
			if err != nil {
				t.Fatal(err)
			}
			checkStats(t, got, tc.want)
			checkCharged(t, g, tc.want)
			if got.Stat["total_rss"] != 8<<20 || got.Stat["cache"] != 1<<20 {
				t.Errorf("Stat = %v, want every memory.stat key", got.Stat)
			}
		})
	}
}

func TestMemoryV2(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  MemoryStats
	}{
		{
			name: "limited with swap",
			files: map[string]string{
				"memory.current": "10485760\n", "memory.stat": v2Stat, "memory.peak": "12582912\n",
				"memory.swap.current": "4096\n", "memory.max": "67108864\n",
				"memory.events":       "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n",
				"memory.events.local": "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\noom_group_kill 0\n",
			},
			want: MemoryStats{Usage: 10 << 20, WorkingSet: 9 << 20, Peak: 12 << 20, Swap: 4096, Limit: 64 << 20, OOMKills: 2, LimitHits: 5},
		},
		{
			name: "unlimited, old kernel without peak or swap files",
			files: map[string]string{
				"memory.current": "524288\n", "memory.stat": v2Stat, "memory.max": "max\n",
				"memory.events": "low 0\nhigh 0\nmax 3\noom 0\noom_kill 0\n",
			},
			want: MemoryStats{Usage: 512 << 10, WorkingSet: 0, Peak: 0, Swap: 0, Limit: -1, OOMKills: 0, LimitHits: 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV2(t)
			g := mustCreate(t, l, "tenon/sb")
			writeFiles(t, g.dirs[Memory], tc.files)
			got, err := g.Memory()
			if err != nil {
				t.Fatal(err)
			}
			checkStats(t, got, tc.want)
			checkCharged(t, g, tc.want)
			if got.Stat["anon"] != 8<<20 {
				t.Errorf("Stat = %v, want every memory.stat key", got.Stat)
			}
		})
	}
}

// checkCharged checks that Charged, from its two counters, is Memory's
// Usage + Swap, WorkingSet, from two files, Memory's WorkingSet, and Room,
// from four, Memory's Usage, WorkingSet, Swap and Limit with nothing else.
func checkCharged(t *testing.T, g *group, want MemoryStats) {
	t.Helper()
	if c, err := g.Charged(); err != nil || c != want.Usage+want.Swap {
		t.Errorf("Charged() = %d, %v, want %d", c, err, want.Usage+want.Swap)
	}
	if ws, err := g.WorkingSet(); err != nil || ws != want.WorkingSet {
		t.Errorf("WorkingSet() = %d, %v, want %d", ws, err, want.WorkingSet)
	}
	room := MemoryStats{Usage: want.Usage, WorkingSet: want.WorkingSet, Swap: want.Swap, Limit: want.Limit}
	if r, err := g.Room(); err != nil || r.Usage != room.Usage || r.WorkingSet != room.WorkingSet || r.Swap != room.Swap || r.Limit != room.Limit ||
		r.Peak != 0 || r.OOMKills != 0 || r.LimitHits != 0 || r.Stat != nil {
		t.Errorf("Room() = %+v, %v, want %+v", r, err, room)
	}
}

func checkStats(t *testing.T, got, want MemoryStats) {
	t.Helper()
	if got.Usage != want.Usage || got.WorkingSet != want.WorkingSet || got.Peak != want.Peak ||
		got.Swap != want.Swap || got.Limit != want.Limit || got.OOMKills != want.OOMKills || got.LimitHits != want.LimitHits {
		t.Errorf("Memory() = %+v, want %+v", got, want)
	}
}

func TestMemoryMissingFileIsError(t *testing.T) {
	l := fakeV1(t)
	g := mustCreate(t, l, "tenon/sb")
	writeFiles(t, g.dirs[Memory], map[string]string{"memory.usage_in_bytes": "1\n"})
	if _, err := g.Memory(); err == nil || !strings.Contains(err.Error(), "tenon/sb") {
		t.Errorf("Memory() with no memory.stat = %v, want an error naming the group", err)
	}
}

func TestSetMemoryLimit(t *testing.T) {
	tests := []struct {
		name   string
		v2     bool
		bytes  int64
		file   string
		wantIn string
	}{
		{name: "v1 limit", bytes: 64 << 20, file: "memory.limit_in_bytes", wantIn: "67108864"},
		{name: "v1 unlimited", bytes: 0, file: "memory.limit_in_bytes", wantIn: "-1"},
		{name: "v2 limit", v2: true, bytes: 1 << 30, file: "memory.max", wantIn: "1073741824"},
		{name: "v2 unlimited", v2: true, bytes: -5, file: "memory.max", wantIn: "max"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV1(t)
			if tc.v2 {
				l = fakeV2(t)
			}
			g := mustCreate(t, l, "tenon/sb")
			if err := g.SetMemoryLimit(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(g.dirs[Memory], tc.file)); got != tc.wantIn {
				t.Errorf("%s = %q, want %q", tc.file, got, tc.wantIn)
			}
		})
	}
}

func TestResetPeakV1(t *testing.T) {
	g := mustCreate(t, fakeV1(t), "tenon/sb")
	writeFiles(t, g.dirs[Memory], map[string]string{"memory.max_usage_in_bytes": "999\n"})
	if err := g.ResetPeak(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(g.dirs[Memory], "memory.max_usage_in_bytes")); got != "0" {
		t.Errorf("max_usage_in_bytes = %q after ResetPeak, want 0", got)
	}
}

// TestResetPeakV2 checks that the reset is written to memory.peak and that
// later reads go through the same open file (the kernel scopes the reset to
// it): the fake kernel's new value is seen through the kept fd.
func TestResetPeakV2(t *testing.T) {
	g := mustCreate(t, fakeV2(t), "tenon/sb")
	d := g.dirs[Memory]
	writeFiles(t, d, map[string]string{
		"memory.current": "100\n", "memory.stat": v2Stat, "memory.peak": "999999\n", "memory.max": "max\n", "memory.events": "oom_kill 0\n",
	})
	if err := g.ResetPeak(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(d, "memory.peak")); got != "reset" {
		t.Errorf("memory.peak received %q, want a reset write", got)
	}
	writeFiles(t, d, map[string]string{"memory.peak": "123\n"}) // the kernel's post-reset value
	m, err := g.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if m.Peak != 123 {
		t.Errorf("Peak after reset = %d, want 123", m.Peak)
	}
	if err := g.ResetPeak(); err != nil { // second reset reuses the fd
		t.Fatal(err)
	}
	if g.peak == nil {
		t.Error("ResetPeak dropped the memory.peak fd")
	}
}

func TestResetPeakV2WithoutPeakFileIsNoop(t *testing.T) {
	g := mustCreate(t, fakeV2(t), "tenon/sb")
	if err := g.ResetPeak(); err != nil {
		t.Errorf("ResetPeak without memory.peak = %v, want nil (no-op)", err)
	}
}

func TestParseFlatKeyed(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]int64
	}{
		{name: "oom_control", in: "oom_kill_disable 0\nunder_oom 1\noom_kill 7\n", want: map[string]int64{"oom_kill_disable": 0, "under_oom": 1, "oom_kill": 7}},
		{name: "skips malformed lines", in: "a 1\nb\nc x\nd 1 2\n\ne -4\n", want: map[string]int64{"a": 1, "e": -4}},
		{name: "empty", in: "", want: map[string]int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFlatKeyed(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %d, want %d", k, got[k], v)
				}
			}
		})
	}
}

func TestOpen(t *testing.T) {
	l := fakeV1(t)
	if _, err := Open(l, "tenon/none"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Open of a missing group = %v, want ErrNotExist", err)
	}
	mkdir(t, filepath.Join(l.Controllers[Memory].Root, "tenon", "mem-only"))
	g, err := Open(l, "/tenon/mem-only/")
	if err != nil {
		t.Fatal(err)
	}
	if g.Path() != "tenon/mem-only" {
		t.Errorf("Path = %q", g.Path())
	}
	if _, err := g.Frozen(); !errors.Is(err, ErrNoHierarchy) {
		t.Errorf("Frozen on a group with no freezer dir = %v, want ErrNoHierarchy", err)
	}
	for _, bad := range []string{"", "/", "../etc", "tenon/../../x"} {
		if _, err := Create(l, bad); err == nil {
			t.Errorf("Create(%q) succeeded", bad)
		}
	}
	if _, err := Create(&Layout{}, "x"); !errors.Is(err, ErrNoMemoryController) {
		t.Errorf("Create with an empty layout = %v, want ErrNoMemoryController", err)
	}
}
