package agentcgroup

import (
	"encoding/json"
	"errors"
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
// epoch. Samples of a stopped container (zero limit) are dropped silently;
// samples without an epoch or with an unreadable mem_usage are dropped
// with WarnBadSample; a file cut off inside the samples keeps the complete
// ones (WarnTruncated). Anything that is not an object with a "samples"
// array is an error.
func ParseSamples(r io.Reader) ([]Sample, Warnings, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, nil, fmt.Errorf("resources.json: %w", err)
	}
	var out []Sample
	warn := Warnings{}
	for dec.More() {
		tok, err := dec.Token()
		if tok != "samples" && err == nil {
			var skip json.RawMessage
			err = dec.Decode(&skip)
			if err == nil {
				continue
			}
		}
		if err == nil {
			err = decodeArray(dec, func(_ int, raw json.RawMessage) {
				var s struct {
					Epoch    float64 `json:"epoch"`
					MemUsage string  `json:"mem_usage"`
				}
				if json.Unmarshal(raw, &s) != nil || s.Epoch <= 0 {
					warn.add(WarnBadSample, 1)
					return
				}
				u, _, ok, err := ParseMemUsage(s.MemUsage)
				if err != nil {
					warn.add(WarnBadSample, 1)
				} else if ok {
					out = append(out, Sample{Epoch: s.Epoch, Bytes: u})
				}
			})
		}
		if err = truncated(err); errors.Is(err, errTruncated) {
			warn.add(WarnTruncated, 1)
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("resources.json: %w", err)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Epoch < out[j].Epoch })
	return out, warn, nil
}
