package trajectory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Load reads a trajectory: one Workflow per line, blank lines ignored. Decoding
// is strict: an unknown field, a line holding more than one value, a version
// other than Version, an invalid workflow or a repeated ID is an error that
// names the line (a *LineError).
func Load(r io.Reader) ([]Workflow, error) {
	br := bufio.NewReader(r)
	seen := map[string]int{}
	var out []Workflow
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading trajectory line %d: %w", line, err)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			w, derr := decodeLine(t)
			if derr == nil {
				if first, dup := seen[w.ID]; dup {
					derr = fieldErr("id", fmt.Sprintf("%q repeats the id of line %d", w.ID, first))
				}
			}
			if derr != nil {
				return nil, &LineError{Line: line, Err: derr}
			}
			seen[w.ID] = line
			out = append(out, w)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
	}
}

// decodeLine checks the version before decoding strictly, so a file from a
// newer tenon says "upgrade" rather than naming a field it does not know.
func decodeLine(b []byte) (Workflow, error) {
	var v struct {
		Version *int `json:"version"`
	}
	probe := json.NewDecoder(bytes.NewReader(b))
	if err := probe.Decode(&v); err != nil {
		return Workflow{}, formatError("not a JSON object: " + trimJSONErr(err))
	}
	if probe.More() {
		return Workflow{}, formatError("more than one JSON value on the line")
	}
	if v.Version == nil {
		return Workflow{}, &VersionError{Got: 0}
	}
	if *v.Version != Version {
		return Workflow{}, &VersionError{Got: *v.Version}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w Workflow
	if err := dec.Decode(&w); err != nil {
		return Workflow{}, formatError(trimJSONErr(err))
	}
	return w, w.Validate()
}

func trimJSONErr(err error) string {
	s := err.Error()
	const p = "json: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// LoadFile opens path and Loads it; errors carry the path.
func LoadFile(path string) ([]Workflow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening trajectory: %w", err)
	}
	defer f.Close()
	wfs, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return wfs, nil
}

// Write writes workflows one per line. A zero Version is written as Version.
// Every workflow is validated and IDs must be unique, so whatever Write
// accepts, Load reads back; errors name the workflow's index as its line.
func Write(w io.Writer, wfs []Workflow) error {
	bw := bufio.NewWriter(w)
	seen := map[string]int{}
	for i, wf := range wfs {
		if wf.Version == 0 {
			wf.Version = Version
		}
		if err := wf.Validate(); err != nil {
			return &LineError{Line: i + 1, Err: err}
		}
		if first, dup := seen[wf.ID]; dup {
			return &LineError{Line: i + 1, Err: fieldErr("id", fmt.Sprintf("%q repeats the id of line %d", wf.ID, first))}
		}
		seen[wf.ID] = i + 1
		b, err := json.Marshal(wf)
		if err != nil {
			return fmt.Errorf("encoding workflow %s: %w", wf.ID, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing trajectory: %w", err)
	}
	return nil
}
