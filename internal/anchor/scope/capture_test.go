package scope

import (
	"strings"
	"testing"
)

func TestCapped(t *testing.T) {
	tests := []struct {
		name    string
		cap     int
		writes  []string
		want    string
		dropped int64
	}{
		{"under", 10, []string{"abc", "de"}, "abcde", 0},
		{"exact", 5, []string{"abcde"}, "abcde", 0},
		{"split write", 4, []string{"ab", "cdef", "gh"}, "abcd", 4},
		{"default cap", 0, []string{strings.Repeat("x", DefaultOutputCap+3)}, strings.Repeat("x", DefaultOutputCap), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapped(tt.cap)
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write(%d bytes) = %d, %v", len(w), n, err)
				}
			}
			got, dropped := c.result()
			if string(got) != tt.want || dropped != tt.dropped {
				t.Errorf("kept %d bytes dropped %d; want %d and %d", len(got), dropped, len(tt.want), tt.dropped)
			}
		})
	}
}
