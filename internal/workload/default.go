package workload

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// calibrationJSON is Calibrate's output on the AgentCgroup haiku traces; see
// calibration.md for how to regenerate it.
//
//go:embed calibration.json
var calibrationJSON []byte

// DefaultCalibration returns the committed calibration (calibration.json).
func DefaultCalibration() (Calibration, error) {
	var c Calibration
	if err := json.Unmarshal(calibrationJSON, &c); err != nil {
		return Calibration{}, fmt.Errorf("decoding embedded calibration.json: %w", err)
	}
	if c.Actions == 0 || len(c.Classes) == 0 {
		return Calibration{}, ErrEmptyCalibration
	}
	return c, nil
}
