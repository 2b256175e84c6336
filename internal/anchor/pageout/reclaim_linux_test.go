//go:build linux

package pageout

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReclaimV2(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		want      bool
		wantErr   bool
		wantWrite string
	}{
		{"v2 group", map[string]string{"memory.current": "268435456\n", "memory.reclaim": ""}, true, false, "268435456"},
		{"v1 group", map[string]string{"memory.usage_in_bytes": "1\n"}, false, false, ""},
		{"old v2 kernel without reclaim", map[string]string{"memory.current": "5\n"}, false, false, ""},
		{"bad current", map[string]string{"memory.current": "x\n", "memory.reclaim": ""}, false, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, v := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := reclaimV2(dir)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Fatalf("reclaimV2 = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "memory.reclaim")); string(b) != tt.wantWrite {
				t.Errorf("memory.reclaim got %q, want %q", b, tt.wantWrite)
			}
		})
	}
}
