package units

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
		err  bool
	}{
		{name: "bytes", in: "4096", want: 4096},
		{name: "gib", in: "3GiB", want: 3 * GiB},
		{name: "short g", in: "2G", want: 2 * GiB},
		{name: "decimal gb", in: "1GB", want: 1e9},
		{name: "fraction", in: "1.5GiB", want: 3 * GiB / 2},
		{name: "lower and space", in: "512 mib", want: 512 * MiB},
		{name: "empty", in: "", err: true},
		{name: "unit only", in: "GiB", err: true},
		{name: "bad unit", in: "3XB", err: true},
		{name: "negative", in: "-1G", err: true},
		{name: "two dots", in: "1.2.3G", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if tt.err {
				if err == nil {
					t.Fatalf("ParseSize(%q) = %d, want error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	if got := FormatSize(3 * GiB / 2); got != "1.50 GiB" {
		t.Fatalf("got %q", got)
	}
	if got := FormatSize(100 * MiB); got != "100.0 MiB" {
		t.Fatalf("got %q", got)
	}
}
