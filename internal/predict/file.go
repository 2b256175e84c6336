package predict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// FileFormat and FileVersion identify model files.
const (
	FileFormat  = "tenon-predict"
	FileVersion = 1
)

// modelFile is the JSON layout of a model file, version 1.
type modelFile struct {
	Format       string `json:"format"`
	Version      int    `json:"version"`
	FeatureCount int    `json:"feature_count"`
	HashBuckets  int    `json:"hash_buckets"`
	FeatureSet   string `json:"feature_set"`
	Target       string `json:"target"` // "log1p_mib" or "mib"
	// LogScaleMiB: the log target is log1p(MiB / LogScaleMiB); absent in
	// files written before it, which fitted log1p(MiB).
	LogScaleMiB    float64   `json:"log_scale_mib,omitempty"`
	HeavyThreshold int64     `json:"heavy_threshold_bytes"`
	IDF            []float64 `json:"idf"`
	Avg            *Forest   `json:"avg"`
	Peak           *Forest   `json:"peak"`
	Heavy          *Forest   `json:"heavy"`
	P90            *Quantile `json:"p90,omitempty"`         // absent: trained on one task
	TrainTasks     []string  `json:"train_tasks,omitempty"` // absent in files written before it
	Resident       int64     `json:"resident_bytes,omitempty"`
}

// Encode writes the model as JSON.
func (m *Model) Encode(w io.Writer) error {
	target := "log1p_mib"
	if m.Linear {
		target = "mib"
	}
	f := modelFile{Format: FileFormat, Version: FileVersion, FeatureCount: FeatureCount,
		HashBuckets: HashBuckets, FeatureSet: m.FeatureSet, Target: target, LogScaleMiB: m.LogScaleMiB,
		HeavyThreshold: m.HeavyThreshold, IDF: m.IDF, Avg: m.Avg, Peak: m.Peak, Heavy: m.Heavy,
		P90: m.P90, TrainTasks: m.TrainTasks, Resident: m.Resident}
	if err := json.NewEncoder(w).Encode(f); err != nil {
		return fmt.Errorf("encoding model: %w", err)
	}
	return nil
}

// Save writes the model to path (through a temporary file and a rename).
func (m *Model) Save(path string) error {
	var buf bytes.Buffer
	if err := m.Encode(&buf); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("saving model: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("saving model: %w", err)
	}
	return nil
}

// Load reads a model file. Errors name the file and wrap ErrModelFormat,
// ErrModelVersion or ErrFeatureCount.
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	defer f.Close()
	m, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	return m, nil
}

// Decode reads a model from JSON.
func Decode(r io.Reader) (*Model, error) {
	var f modelFile
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, modelErr(ErrModelFormat, "corrupt JSON: %v", err)
		}
		return nil, modelErr(ErrModelFormat, "%v", err)
	}
	if f.Format != FileFormat {
		return nil, modelErr(ErrModelFormat, "format %q, want %q", f.Format, FileFormat)
	}
	if f.Version != FileVersion {
		return nil, modelErr(ErrModelVersion, "version %d not supported (this tenon reads version %d): retrain the model", f.Version, FileVersion)
	}
	if f.FeatureCount != FeatureCount || f.HashBuckets != HashBuckets || len(f.IDF) != HashBuckets {
		return nil, modelErr(ErrFeatureCount, "feature count %d does not match this tenon's %d (hash buckets %d vs %d, %d idf weights): retrain the model", f.FeatureCount, FeatureCount, f.HashBuckets, HashBuckets, len(f.IDF))
	}
	m := &Model{FeatureSet: f.FeatureSet, HeavyThreshold: f.HeavyThreshold, IDF: f.IDF,
		Avg: f.Avg, Peak: f.Peak, Heavy: f.Heavy, P90: f.P90, TrainTasks: f.TrainTasks,
		Resident: f.Resident}
	switch f.Target {
	case "log1p_mib":
		m.LogScaleMiB = 1
		if f.LogScaleMiB != 0 {
			m.LogScaleMiB = f.LogScaleMiB
		}
		if m.LogScaleMiB <= 0 || math.IsNaN(m.LogScaleMiB) || math.IsInf(m.LogScaleMiB, 0) {
			return nil, modelErr(ErrModelFormat, "log_scale_mib %g, want a positive scale", f.LogScaleMiB)
		}
	case "mib":
		m.Linear = true
	default:
		return nil, modelErr(ErrModelFormat, "unknown target %q", f.Target)
	}
	if f.FeatureSet != FeatureSetCurrent && f.FeatureSet != FeatureSetStatic {
		return nil, modelErr(ErrModelFormat, "unknown feature set %q", f.FeatureSet)
	}
	type namedForest struct {
		name string
		f    *Forest
	}
	forests := []namedForest{{"avg", f.Avg}, {"peak", f.Peak}, {"heavy", f.Heavy}}
	if q := f.P90; q != nil {
		if q.Q <= 0 || q.Q >= 1 || q.Residual < 0 || math.IsNaN(q.Residual) {
			return nil, modelErr(ErrModelFormat, "p90: quantile %g with residual %g, want a quantile in (0, 1) and a residual >= 0", q.Q, q.Residual)
		}
		forests = append(forests, namedForest{"p90 scale", q.Scale})
	}
	for _, fr := range forests {
		if fr.f == nil || len(fr.f.Trees) == 0 {
			return nil, modelErr(ErrModelFormat, "forest %q is missing or empty", fr.name)
		}
		for i, t := range fr.f.Trees {
			if t == nil {
				return nil, modelErr(ErrModelFormat, "forest %q tree %d is null", fr.name, i)
			}
			if err := t.validate(FeatureCount); err != nil {
				return nil, modelErr(ErrModelFormat, "forest %q tree %d: %v", fr.name, i, err)
			}
		}
	}
	return m, nil
}

// modelError carries a sentinel for errors.Is and a message for people.
type modelError struct {
	kind error
	msg  string
}

func (e *modelError) Error() string { return e.msg }
func (e *modelError) Unwrap() error { return e.kind }

func modelErr(kind error, format string, args ...any) error {
	return &modelError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
