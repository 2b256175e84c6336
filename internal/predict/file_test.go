package predict

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func trainSmall(t *testing.T) (*Model, []Example) {
	t.Helper()
	wfs := synthWorkflows(30, 3)
	ex := withLevels(wfs, ExamplesFromWorkflows(wfs))
	m, err := Train(ex, TrainConfig{Trees: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m, ex
}

func TestModelRoundTrip(t *testing.T) {
	m, ex := trainSmall(t)
	path := filepath.Join(t.TempDir(), "model.json")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ex {
		if a, b := m.Predict(e.Ctx), got.Predict(e.Ctx); a != b {
			t.Fatalf("example %d: prediction before save %+v, after load %+v", i, a, b)
		}
	}
	if got.LogScaleMiB != DefaultLogScaleMiB {
		t.Errorf("loaded log scale %g MiB, want the default %g", got.LogScaleMiB, DefaultLogScaleMiB)
	}
	if got.P90 == nil || got.P90.Q != PeakQuantile {
		t.Errorf("loaded p90 calibration %+v, want quantile %g", got.P90, PeakQuantile)
	}
	if got.Resident != m.Resident || m.Resident == 0 {
		t.Errorf("loaded median sandbox level %d, saved %d (want it known: the examples record it)", got.Resident, m.Resident)
	}
	if len(got.TrainTasks) != 30 || !slices.Equal(got.TrainTasks, m.TrainTasks) {
		t.Errorf("loaded train tasks %v, want the 30 saved %v", got.TrainTasks, m.TrainTasks)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte(`{"format":"tenon-predict","version":1,`)) {
		t.Errorf("model file starts %q", raw[:min(len(raw), 60)])
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	m, _ := trainSmall(t)
	var good bytes.Buffer
	if err := m.Encode(&good); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(map[string]any)) string {
		var v map[string]any
		if err := json.Unmarshal(good.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		f(v)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name    string
		content string
		want    error
		text    string
	}{
		{"corrupt JSON", good.String()[:good.Len()/2], ErrModelFormat, "corrupt JSON"},
		{"empty file", "", ErrModelFormat, "corrupt JSON"},
		{"other format", edit(func(v map[string]any) { v["format"] = "sklearn" }), ErrModelFormat, `format "sklearn"`},
		{"version 3", edit(func(v map[string]any) { v["version"] = 3 }), ErrModelVersion, "version 3 not supported"},
		{"feature count", edit(func(v map[string]any) { v["feature_count"] = 80 }), ErrFeatureCount,
			"feature count 80 does not match this tenon's"},
		{"missing forest", edit(func(v map[string]any) { delete(v, "heavy") }), ErrModelFormat, `forest "heavy" is missing`},
		{"tree points backwards", edit(func(v map[string]any) {
			tr := v["peak"].(map[string]any)["trees"].([]any)[0].(map[string]any)
			tr["left"].([]any)[0] = 0
		}), ErrModelFormat, `forest "peak" tree 0: node 0 has children`},
		{"feature out of range", edit(func(v map[string]any) {
			tr := v["avg"].(map[string]any)["trees"].([]any)[0].(map[string]any)
			tr["feature"].([]any)[0] = 1000
		}), ErrModelFormat, "splits on feature 1000"},
		{"unknown target", edit(func(v map[string]any) { v["target"] = "sqrt" }), ErrModelFormat, `unknown target "sqrt"`},
		{"p90 without its scale", edit(func(v map[string]any) { delete(v["p90"].(map[string]any), "scale") }), ErrModelFormat, `forest "p90 scale" is missing`},
		{"negative p90 residual", edit(func(v map[string]any) { v["p90"].(map[string]any)["residual"] = -1 }), ErrModelFormat, "p90: quantile 0.9 with residual -1"},
		{"negative log scale", edit(func(v map[string]any) { v["log_scale_mib"] = -0.5 }), ErrModelFormat, "log_scale_mib -0.5, want a positive scale"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Load: %v, want %v", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "model file "+path+": ") || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q: want prefix %q and %q", err, "model file "+path+": ", tc.text)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

// TestLoadOlderLogTarget: a model file written before the log scale was
// recorded fitted log1p(MiB), and loads with a scale of 1 MiB.
func TestLoadOlderLogTarget(t *testing.T) {
	m, ex := trainSmall(t)
	var buf bytes.Buffer
	if err := m.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if _, ok := v["log_scale_mib"]; !ok {
		t.Fatal("model file has no log_scale_mib")
	}
	delete(v, "log_scale_mib")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	old, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if old.LogScaleMiB != 1 {
		t.Errorf("log scale %g MiB, want 1 (log1p(MiB))", old.LogScaleMiB)
	}
	m.LogScaleMiB = 1
	if a, b := m.Predict(ex[0].Ctx), old.Predict(ex[0].Ctx); a != b {
		t.Errorf("prediction with scale 1 %+v, loaded without a scale %+v", a, b)
	}
}
