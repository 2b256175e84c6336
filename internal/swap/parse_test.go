package swap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseSwaps(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []SwapEntry
		wantErr bool
	}{
		{name: "empty table", in: "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"},
		{name: "zram and file", in: "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" +
			"/dev/zram0                              partition\t65532\t\t1024\t\t100\n" +
			"/var/swap\\040file                       file\t\t1048572\t\t0\t\t-2\n",
			want: []SwapEntry{
				{Filename: "/dev/zram0", Type: "partition", Size: 65532 << 10, Used: 1 << 20, Priority: 100},
				{Filename: "/var/swap file", Type: "file", Size: 1048572 << 10, Used: 0, Priority: -2},
			}},
		{name: "short line", in: "Filename Type Size Used Priority\n/dev/zram0 partition 10 0\n", wantErr: true},
		{name: "bad number", in: "Filename Type Size Used Priority\n/dev/zram0 partition ten 0 1\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSwaps(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseSwaps error = %v, want error %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ParseSwaps = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFindSwap(t *testing.T) {
	entries := []SwapEntry{{Filename: "/dev/sda2"}, {Filename: "/dev/zram0"}}
	if e := findSwap(entries, "/tmp/x/dev/zram0", "zram0"); e == nil || e.Filename != "/dev/zram0" {
		t.Fatalf("findSwap by base name = %+v", e)
	}
	if e := findSwap(entries, "/dev/zram1", "zram1"); e != nil {
		t.Fatalf("findSwap(zram1) = %+v, want nil", e)
	}
}

func TestParseMMStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    MMStat
		wantErr bool
	}{
		{name: "kernel 6", in: " 8192000  2048000  2310144        0  2310144     1200        0        3        5\n",
			want: MMStat{8192000, 2048000, 2310144, 0, 2310144, 1200, 0, 3, 5}},
		{name: "old kernel seven fields", in: "4096 1024 8192 0 8192 0 0\n",
			want: MMStat{OrigDataSize: 4096, ComprDataSize: 1024, MemUsedTotal: 8192, MemUsedMax: 8192}},
		{name: "idle", in: "0 0 0 0 0 0 0 0 0\n", want: MMStat{}},
		{name: "too short", in: "1 2 3\n", wantErr: true},
		{name: "not a number", in: "1 2 3 4 5 x 7\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMMStat(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseMMStat error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("ParseMMStat = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCompAlgorithm(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		avail    []string
		current  string
		picked   string
		prefered []string
	}{
		{"this machine", "[lzo-rle] lzo lz4 \n", []string{"lzo-rle", "lzo", "lz4"}, "lzo-rle", "lz4", []string{"zstd", "lz4"}},
		{"zstd offered", "lzo [lz4] zstd\n", []string{"lzo", "lz4", "zstd"}, "lz4", "zstd", []string{"zstd", "lz4"}},
		{"neither", "[lzo]\n", []string{"lzo"}, "lzo", "", []string{"zstd", "lz4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			avail, cur, err := ParseCompAlgorithm(strings.NewReader(tt.in))
			if err != nil || !slices.Equal(avail, tt.avail) || cur != tt.current {
				t.Fatalf("ParseCompAlgorithm = %q %q %v, want %q %q", avail, cur, err, tt.avail, tt.current)
			}
			if got := pickAlgorithm(avail, tt.prefered...); got != tt.picked {
				t.Fatalf("pickAlgorithm = %q, want %q", got, tt.picked)
			}
		})
	}
}

func TestMountedDevice(t *testing.T) {
	mounts := "sysfs /sys sysfs rw 0 0\n/dev/zram1 /tmp ext4 rw 0 0\n/dev/vda / ext4 rw 0 0\n"
	tests := []struct {
		name string
		dev  string
		want bool
	}{
		{"mounted", "/dev/zram1", true},
		{"not mounted", "/dev/zram0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mountedDevice(strings.NewReader(mounts), tt.dev)
			if err != nil || got != tt.want {
				t.Fatalf("mountedDevice(%s) = %v, %v; want %v", tt.dev, got, err, tt.want)
			}
		})
	}
}

func TestMMStatCost(t *testing.T) {
	s := MMStat{OrigDataSize: 300 << 20, ComprDataSize: 90 << 20, MemUsedTotal: 100 << 20}
	tests := []struct {
		name   string
		s      MMStat
		stored int64
		want   int64
	}{
		{"share", s, 150 << 20, 50 << 20},
		{"all", s, 300 << 20, 100 << 20},
		{"more than stored is capped", s, 600 << 20, 100 << 20},
		{"nothing swapped", s, 0, 0},
		{"empty device", MMStat{}, 10 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Cost(tt.stored); got != tt.want {
				t.Errorf("Cost(%d) = %d, want %d", tt.stored, got, tt.want)
			}
		})
	}
}

func TestManagerMMStat(t *testing.T) {
	dir := t.TempDir()
	m := NewManager(nil)
	m.Paths.SysBlock = dir
	if _, ok, err := m.MMStat(); ok || err != nil {
		t.Fatalf("absent device: ok %v, err %v", ok, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "zram0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zram0", "mm_stat"), []byte("  314572800 94371840 104857600 0 104857600 12 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mm, ok, err := m.MMStat()
	if !ok || err != nil || mm.OrigDataSize != 300<<20 || mm.MemUsedTotal != 100<<20 {
		t.Errorf("MMStat = %+v, %v, %v", mm, ok, err)
	}
}
