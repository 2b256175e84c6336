package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ParsePressure parses a PSI file ("some avg10=.. avg60=.. avg300=.. total=..",
// then the same for "full"; total in microseconds). A missing "full" line
// leaves Full* at 0.
func ParsePressure(r io.Reader) (Pressure, error) {
	var p Pressure
	seen := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var a10, a60 *float64
		var total *time.Duration
		switch f[0] {
		case "some":
			a10, a60, total = &p.Some10, &p.Some60, &p.SomeTotal
		case "full":
			a10, a60, total = &p.Full10, &p.Full60, &p.FullTotal
		default:
			return Pressure{}, fmt.Errorf("parsing pressure: unknown line %q", sc.Text())
		}
		seen = true
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return Pressure{}, fmt.Errorf("parsing pressure: bad field %q", kv)
			}
			var dst *float64
			switch k {
			case "avg10":
				dst = a10
			case "avg60":
				dst = a60
			case "total":
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil || us < 0 {
					return Pressure{}, fmt.Errorf("parsing pressure: bad total %q", kv)
				}
				*total = time.Duration(us) * time.Microsecond
				continue
			default:
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return Pressure{}, fmt.Errorf("parsing pressure %s: %w", kv, err)
			}
			*dst = x
		}
	}
	if err := sc.Err(); err != nil {
		return Pressure{}, fmt.Errorf("reading pressure: %w", err)
	}
	if !seen {
		return Pressure{}, errors.New("parsing pressure: empty")
	}
	return p, nil
}

func readPressure(path string) (Pressure, error) {
	b, err := readControl(path)
	if err != nil {
		return Pressure{}, err
	}
	return ParsePressure(bytes.NewReader(b))
}

// MemoryPressure returns the group's memory PSI on v2 (memory.pressure), or
// the host's (<ProcRoot>/pressure/memory, Host=true) where the group has none.
func (g *group) MemoryPressure() (Pressure, error) {
	if d, v, err := g.dir(Memory); err == nil && v == V2 {
		p, err := readPressure(filepath.Join(d, "memory.pressure"))
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return Pressure{}, fmt.Errorf("reading memory pressure of %s: %w", g.path, err)
		}
	}
	procRoot := g.layout.ProcRoot
	if procRoot == "" {
		procRoot = "/proc"
	}
	p, err := readPressure(filepath.Join(procRoot, "pressure", "memory"))
	if err != nil {
		return Pressure{}, fmt.Errorf("reading host memory pressure: %w", err)
	}
	p.Host = true
	return p, nil
}
