package procfs

import "testing"

func TestUnescape(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "/dev/zram0", "/dev/zram0"},
		{"space", `/mnt/my\040disk`, "/mnt/my disk"},
		{"tab newline backslash", `a\011b\012c\134d`, "a\tb\nc\\d"},
		{"not octal", `a\09x`, `a\09x`},
		{"short at the end", `a\04`, `a\04`},
		{"out of byte range", `a\777`, `a\777`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unescape(tt.in); got != tt.want {
				t.Errorf("Unescape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
