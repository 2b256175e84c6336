package procfs

import (
	"errors"
	"testing"
)

func TestStatField(t *testing.T) {
	line := []byte("42 (a (b) c) R 9 42 1 0 -1 4194560 0 0 0 0 1 2 0 0 20 0 1 0 12345 1000 10")
	tests := []struct {
		n       int
		want    string
		wantErr bool
	}{
		{n: 1, want: "42"},
		{n: 2, want: "a (b) c"}, // comm with spaces and parentheses
		{n: 3, want: "R"},
		{n: 4, want: "9"},
		{n: 22, want: "12345"},
		{n: 40, wantErr: true},
		{n: 0, wantErr: true},
	}
	for _, tt := range tests {
		got, err := StatField(line, tt.n)
		if (err != nil) != tt.wantErr || err == nil && got != tt.want {
			t.Errorf("StatField(%d) = %q, %v; want %q (error %v)", tt.n, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := StatField([]byte("nonsense"), 4); !errors.Is(err, ErrStatFormat) {
		t.Errorf("malformed line: %v, want ErrStatFormat", err)
	}
}
