package store

import (
	"encoding/json"
	"fmt"
)

// valueVersion is the encoding version this build writes and reads.
const valueVersion = 1

type envelope[T any] struct {
	V    int `json:"v"`
	Data T   `json:"data"`
}

func encode[T any](v T) ([]byte, error) {
	b, err := json.Marshal(envelope[T]{V: valueVersion, Data: v})
	if err != nil {
		return nil, fmt.Errorf("encoding value: %w", err)
	}
	return b, nil
}

func decode[T any](b []byte) (T, error) {
	var zero T
	var head struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return zero, fmt.Errorf("decoding value: %w", err)
	}
	if head.V == nil {
		return zero, fmt.Errorf("%w: value has no version field", ErrUnknownVersion)
	}
	if *head.V != valueVersion {
		return zero, fmt.Errorf("%w: version %d (this build reads version %d)", ErrUnknownVersion, *head.V, valueVersion)
	}
	var env envelope[T]
	if err := json.Unmarshal(b, &env); err != nil {
		return zero, fmt.Errorf("decoding value: %w", err)
	}
	return env.Data, nil
}
