package census

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func sampleResults() []SampleResult {
	return []SampleResult{
		{TimeS: 15, N: 4, Config: "host", RealBytes: 100 << 20, OracleBytes: 90 << 20, DuplicateBytes: 10 << 20,
			Classes:        Classes{FileSameContent: 1 << 20, AnonEqualsFile: 1 << 20, HeapBirth: 6 << 20, HeapLater: 2 << 20},
			HeldByAllBytes: 3 << 20, SharedLayerBytes: 40 << 20},
		{TimeS: 600, N: 8, Config: "copied", RealBytes: 2 << 30, OracleBytes: 1 << 30, DuplicateBytes: 1 << 30,
			Classes: Classes{FileSameContent: 1 << 30}},
	}
}

func TestWriteJSONFieldNames(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc["samples"]
	if len(s) != 2 {
		t.Fatalf("samples = %d, want 2", len(s))
	}
	want := []string{"t_s", "n", "config", "real_bytes", "oracle_bytes", "duplicate_bytes", "classes", "held_by_all_bytes", "shared_layer_bytes"}
	if len(s[0]) != len(want) {
		t.Errorf("keys = %v, want exactly %v", s[0], want)
	}
	for _, k := range want {
		if _, ok := s[0][k]; !ok {
			t.Errorf("missing key %q", k)
		}
	}
	cl := s[0]["classes"].(map[string]any)
	for _, k := range []string{"file_same_content", "anon_equals_file", "heap_birth", "heap_later"} {
		if _, ok := cl[k]; !ok {
			t.Errorf("missing class %q", k)
		}
	}
	if len(cl) != 4 || cl["heap_birth"].(float64) != 6<<20 {
		t.Errorf("classes = %v", cl)
	}
	buf.Reset()
	if err := WriteJSON(&buf, nil); err != nil || !strings.Contains(buf.String(), `"samples": []`) {
		t.Errorf("empty report = %q, %v", buf.String(), err)
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"heap_birth", "100.0 MiB", "10.0 MiB (10.0%)", "6.0 MiB (6.0%)", "1.00 GiB (50.0%)", "copied", "shared_layer", "40.0 MiB (40.0%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("table has %d lines, want 3", n)
	}
}

func TestWritePlotPNG(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePlot(&buf, sampleResults(), "census"); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG\r\n\x1a\n")) || buf.Len() < 1000 {
		t.Errorf("not a PNG (%d bytes)", buf.Len())
	}
}
