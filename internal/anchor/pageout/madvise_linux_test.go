//go:build linux

package pageout

import (
	"encoding/binary"
	"reflect"
	"testing"
)

func TestAdvance(t *testing.T) {
	base := func() []iovec { return []iovec{{0x1000, 0x2000}, {0x8000, 0x1000}, {0x10000, 0x3000}} }
	tests := []struct {
		name string
		n    uint64
		want []iovec
	}{
		{"nothing", 0, base()},
		{"inside first", 0x800, []iovec{{0x1800, 0x1800}, {0x8000, 0x1000}, {0x10000, 0x3000}}},
		{"exactly first", 0x2000, []iovec{{0x8000, 0x1000}, {0x10000, 0x3000}}},
		{"into third", 0x3000 + 0x1000, []iovec{{0x11000, 0x2000}}},
		{"all", 0x6000, []iovec{}},
		{"more than all", 0x9000, []iovec{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := advance(base(), tt.n)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("advance(%#x) = %#v, want %#v", tt.n, got, tt.want)
			}
		})
	}
}

func TestSwappedRuns(t *testing.T) {
	const page = 4096
	enc := func(es ...uint64) []byte {
		b := make([]byte, 8*len(es))
		for i, e := range es {
			binary.LittleEndian.PutUint64(b[8*i:], e)
		}
		return b
	}
	tests := []struct {
		name    string
		entries []byte
		want    [][2]uint64
	}{
		{"none", enc(pmPresent, 0, pmPresent), nil},
		{"one run", enc(pmSwapped, pmSwapped|5, pmPresent, 0), [][2]uint64{{0x10000, 0x12000}}},
		{"two runs", enc(pmSwapped, 0, pmSwapped, pmSwapped), [][2]uint64{{0x10000, 0x11000}, {0x12000, 0x14000}}},
		{"present wins", enc(pmSwapped | pmPresent), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := swappedRuns(tt.entries, 0x10000, page); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}
