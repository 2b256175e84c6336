package pageout

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/procfs"
)

const mapsFixture = `55d0c0a00000-55d0c0a02000 r--p 00000000 fd:00 1234                       /usr/bin/heap
55d0c0a02000-55d0c0a10000 r-xp 00002000 fd:00 1234                       /usr/bin/heap
55d0c0a10000-55d0c0a11000 rw-p 00010000 fd:00 1234                       /usr/bin/heap
55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0010000000 rw-p 00000000 00:00 0 
7f0010000000-7f0010001000 ---p 00000000 00:00 0 
7f0020000000-7f0020100000 rw-s 00000000 00:05 99                         /dev/shm/x
7f0030000000-7f0030001000 rw-p 00000000 00:00 0                          [anon:go heap]
7f0040000000-7f0040002000 rw-p 00000000 fd:00 77                         /tmp/name with spaces
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
7ffc00100000-7ffc00102000 r--p 00000000 00:00 0                          [vvar]
7ffc00102000-7ffc00104000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
`

func TestAnonRanges(t *testing.T) {
	ms, err := procfs.ParseMaps(strings.NewReader(mapsFixture))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range AnonRanges(ms) {
		got = append(got, m.Path+"@"+m.Perms)
	}
	want := []string{"/usr/bin/heap@rw-p", "[heap]@rw-p", "@rw-p", "[anon:go heap]@rw-p", "/tmp/name with spaces@rw-p", "[stack]@rw-p"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("anon ranges\n got %q\nwant %q", got, want)
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Residency
		wantErr bool
	}{
		{"process", "Name:\theap\nVmRSS:\t  270000 kB\nRssAnon:\t  262144 kB\nRssFile:\t    1024 kB\nRssShmem:\t       0 kB\nVmSwap:\t     512 kB\n",
			Residency{RssAnon: 262144 << 10, RssFile: 1 << 20, VmSwap: 512 << 10}, false},
		{"kernel thread", "Name:\tkthreadd\nState:\tS\n", Residency{}, true},
		{"bad number", "RssAnon:\tx kB\n", Residency{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStatus(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
