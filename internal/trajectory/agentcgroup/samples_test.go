package agentcgroup

import (
	"maps"
	"strings"
	"testing"
)

func TestParseMemUsage(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		usage   int64
		ok      bool
		wantErr bool
	}{
		{name: "decimal MB", in: "185.3MB / 134.5GB", usage: 185_300_000, ok: true},
		{name: "binary MiB", in: "1.5MiB / 8GiB", usage: 1572864, ok: true},
		{name: "decimal kB", in: "12kB / 1GB", usage: 12_000, ok: true},
		{name: "binary KiB", in: "2KiB / 1GiB", usage: 2048, ok: true},
		{name: "decimal GB", in: "1.2GB / 134.5GB", usage: 1_200_000_000, ok: true},
		{name: "binary GiB", in: "0.5GiB / 8GiB", usage: 1 << 29, ok: true},
		{name: "bytes", in: "512B / 1GB", usage: 512, ok: true},
		{name: "stopped container", in: "0B / 0B", usage: 0, ok: false},
		{name: "no slash", in: "185MB", wantErr: true},
		{name: "bad unit", in: "5XB / 1GB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, _, ok, err := ParseMemUsage(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if u != tt.usage || ok != tt.ok {
				t.Errorf("ParseMemUsage(%q) = %d, ok %v; want %d, ok %v", tt.in, u, ok, tt.usage, tt.ok)
			}
		})
	}
}

func TestParseSamplesSortsAndDropsStopped(t *testing.T) {
	in := `{"samples":[
		{"epoch": 12, "mem_usage": "2MiB / 1GiB"},
		{"epoch": 11, "mem_usage": "1MiB / 1GiB"},
		{"epoch": 13, "mem_usage": "0B / 0B"}]}`
	got, _, err := ParseSamples(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Epoch != 11 || got[1].Bytes != 2<<20 {
		t.Errorf("ParseSamples = %+v, want epochs 11,12 and the stopped sample dropped", got)
	}
}

// TestParseSamplesDamaged: unreadable samples are dropped and counted, a
// file cut off inside the samples keeps the complete ones.
func TestParseSamplesDamaged(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		warn Warnings
	}{
		{"bad unit dropped", `{"samples":[{"epoch":1,"mem_usage":"3QB / 1GB"},{"epoch":2,"mem_usage":"3MB / 1GB"}]}`, 1, Warnings{WarnBadSample: 1}},
		{"no epoch dropped", `{"samples":[{"mem_usage":"3MB / 1GB"},{"epoch":2,"mem_usage":"3MB / 1GB"}]}`, 1, Warnings{WarnBadSample: 1}},
		{"other keys skipped", `{"meta":{"a":[1,2]},"samples":[{"epoch":2,"mem_usage":"3MB / 1GB"}],"z":1}`, 1, Warnings{}},
		{"truncated inside a sample", `{"samples":[{"epoch":1,"mem_usage":"3MB / 1GB"},{"epoch":2,"mem_u`, 1, Warnings{WarnTruncated: 1}},
		{"truncated after the samples", `{"samples":[{"epoch":1,"mem_usage":"3MB / 1GB"}], "note": "ab`, 1, Warnings{WarnTruncated: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warn, err := ParseSamples(strings.NewReader(tt.in))
			if err != nil || len(got) != tt.n || !maps.Equal(warn, tt.warn) {
				t.Errorf("%d samples, warnings %v, err %v; want %d, %v", len(got), warn, err, tt.n, tt.warn)
			}
		})
	}
}

// TestParseSamplesUnusable: a file that is not a samples object is an
// error that says what is wrong.
func TestParseSamplesUnusable(t *testing.T) {
	for in, want := range map[string]string{
		``:      "resources.json: empty file",
		`[1,2]`: `resources.json: want "{", found [`,
		`{"samples":[{"epoch":1,"mem_usage":"3MB / 1GB"} x]}`: "resources.json: expected comma after array element",
	} {
		if _, _, err := ParseSamples(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSamples(%q): err %v, want %q", in, err, want)
		}
	}
}
