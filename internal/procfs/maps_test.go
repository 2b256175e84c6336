package procfs

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMaps(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Mapping
		wantErr error
	}{
		{
			name: "file mapping",
			in:   "55d0c0a00000-55d0c0a02000 r-xp 00001000 08:01 1234                       /usr/bin/cat\n",
			want: []Mapping{{Start: 0x55d0c0a00000, End: 0x55d0c0a02000, Perms: "r-xp", Offset: 0x1000, Major: 8, Minor: 1, Inode: 1234, Path: "/usr/bin/cat"}},
		},
		{
			name: "anonymous without path and shared memfd with spaces",
			in: "7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n" +
				"7f0000200000-7f0000201000 rw-s 00000000 00:01 99 /memfd:my buf (deleted)\n",
			want: []Mapping{
				{Start: 0x7f0000000000, End: 0x7f0000100000, Perms: "rw-p"},
				{Start: 0x7f0000200000, End: 0x7f0000201000, Perms: "rw-s", Minor: 1, Inode: 99, Path: "/memfd:my buf (deleted)"},
			},
		},
		{
			name: "special mappings and blank lines",
			in:   "\nffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n",
			want: []Mapping{{Start: 0xffffffffff600000, End: 0xffffffffff601000, Perms: "--xp", Path: "[vsyscall]"}},
		},
		{
			name: "file name with spaces",
			in:   "7f0040000000-7f0040002000 rw-p 00000000 fd:00 77                         /tmp/name with spaces\n",
			want: []Mapping{{Start: 0x7f0040000000, End: 0x7f0040002000, Perms: "rw-p", Major: 0xfd, Inode: 77, Path: "/tmp/name with spaces"}},
		},
		{name: "bad address", in: "zz-10 r--p 0 00:00 0\n", wantErr: ErrMapsFormat},
		{name: "end before start", in: "20-10 r--p 0 00:00 0\n", wantErr: ErrMapsFormat},
		{name: "missing fields", in: "10-20 r--p 0\n", wantErr: ErrMapsFormat},
		{name: "bad device", in: "10-20 r--p 0 0801 0\n", wantErr: ErrMapsFormat},
		{name: "bad perms", in: "10-20 r-p 0 08:01 0\n", wantErr: ErrMapsFormat},
		{name: "no dash", in: "1000 rw-p 0 00:00 0\n", wantErr: ErrMapsFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMaps(strings.NewReader(tt.in))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d mappings, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("mapping %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestMappingHelpers(t *testing.T) {
	m := Mapping{Start: 0x1000, End: 0x5000, Perms: "r--s", Major: 0x103, Minor: 0x1ff, Path: "[vdso]"}
	if m.Private() || !m.Readable() || !m.Special() {
		t.Errorf("private/readable/special = %v/%v/%v, want false/true/true", m.Private(), m.Readable(), m.Special())
	}
	if p := (Mapping{Perms: "rw-p"}); !p.Private() {
		t.Errorf("%q not private", p.Perms)
	}
	if got := m.Size(); got != 0x4000 {
		t.Errorf("Size = %#x, want 0x4000", got)
	}
	// glibc makedev(0x103, 0x1ff) = 0x103<<8 | 0xff | 0x100<<12
	if got, want := m.Dev(), uint64(0x103<<8|0xff|0x100<<12); got != want {
		t.Errorf("Dev = %#x, want %#x", got, want)
	}
}
