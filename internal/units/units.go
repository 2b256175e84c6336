// Package units parses and formats byte sizes such as "3GiB", "512MiB" or "1.5G".
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Byte multiples.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

var suffixes = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1e3, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1e9, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1e12, "tib": 1 << 40,
}

// ParseSize parses a size with an optional unit. Binary units (KiB, MiB, GiB,
// TiB) and their one-letter forms (K, M, G, T) are powers of 1024; KB, MB, GB
// and TB are powers of 1000. A plain number is bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := suffixes[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("invalid size %q: want a number with an optional unit such as 512MiB, 3GiB or 1.5G", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %v", s, err)
	}
	b := v * mult
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return int64(math.Round(b)), nil
}

// FormatSize renders n bytes with a binary unit, e.g. "1.50 GiB".
func FormatSize(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	var s string
	switch {
	case n >= TiB:
		s = fmt.Sprintf("%.2f TiB", float64(n)/float64(TiB))
	case n >= GiB:
		s = fmt.Sprintf("%.2f GiB", float64(n)/float64(GiB))
	case n >= MiB:
		s = fmt.Sprintf("%.1f MiB", float64(n)/float64(MiB))
	case n >= KiB:
		s = fmt.Sprintf("%.1f KiB", float64(n)/float64(KiB))
	default:
		s = fmt.Sprintf("%d B", n)
	}
	if neg {
		return "-" + s
	}
	return s
}

// Size is a flag.Value holding a byte size.
type Size int64

// String implements flag.Value.
func (s *Size) String() string { return FormatSize(int64(*s)) }

// Set implements flag.Value.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}
