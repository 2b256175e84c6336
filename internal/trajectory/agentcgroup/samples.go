package agentcgroup

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tenon-dev/tenon/internal/units"
)

// Sample is one docker-stats sample of the whole container.
type Sample struct {
	Epoch float64 // unix seconds
	Bytes int64   // memory usage
}

// ParseMemUsage parses docker/podman stats' "usage / limit" text such as
// "185.3MB / 134.5GB" or "1.2GiB / 8GiB" into bytes. Units follow
// units.ParseSize: B, kB/KB = 1000, KiB = 1024, MB = 10^6, MiB = 2^20,
// GB = 10^9, GiB = 2^30. ok is false for "0B / 0B", the stopped-container
// sample docker prints with a zero limit.
func ParseMemUsage(s string) (usage, limit int64, ok bool, err error) {
	u, l, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false, fmt.Errorf("mem_usage %q: want \"usage / limit\"", s)
	}
	if usage, err = units.ParseSize(u); err != nil {
		return 0, 0, false, fmt.Errorf("mem_usage usage: %w", err)
	}
	if limit, err = units.ParseSize(l); err != nil {
		return 0, 0, false, fmt.Errorf("mem_usage limit: %w", err)
	}
	return usage, limit, limit > 0, nil
}

// ParseSamples reads resources.json and returns its valid samples sorted by
// epoch. Samples of a stopped container (zero limit) are dropped.
func ParseSamples(r io.Reader) ([]Sample, error) {
	var doc struct {
		Samples []struct {
			Epoch    float64 `json:"epoch"`
			MemUsage string  `json:"mem_usage"`
		} `json:"samples"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding resources.json: %w", err)
	}
	out := make([]Sample, 0, len(doc.Samples))
	for i, s := range doc.Samples {
		u, _, ok, err := ParseMemUsage(s.MemUsage)
		if err != nil {
			return nil, fmt.Errorf("resources.json sample %d: %w", i, err)
		}
		if ok && s.Epoch > 0 {
			out = append(out, Sample{Epoch: s.Epoch, Bytes: u})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Epoch < out[j].Epoch })
	return out, nil
}
