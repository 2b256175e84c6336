package predict

import "errors"

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrModelFormat means a model file is not JSON, or not a tenon-predict
	// model, or is internally inconsistent (for example a tree that points
	// outside itself). Retrain or fetch the file again.
	ErrModelFormat = errors.New("predict: not a valid tenon-predict model")

	// ErrModelVersion means a model file has a format version this build does
	// not read. Retrain the model with this tenon.
	ErrModelVersion = errors.New("predict: model version not supported")

	// ErrFeatureCount means a model was trained on a different feature layout
	// than this build computes. Retrain the model with this tenon.
	ErrFeatureCount = errors.New("predict: model feature count does not match")

	// ErrNoExamples means Train was given no usable examples.
	ErrNoExamples = errors.New("predict: no training examples")
)
