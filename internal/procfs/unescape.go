package procfs

import (
	"strconv"
	"strings"
)

// Unescape decodes the octal escapes the kernel writes into path fields of
// /proc/self/mountinfo and /proc/swaps (\040 for space, \011, \012, \134).
// A backslash not followed by three octal digits is kept as is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
