package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/tenon-dev/tenon/internal/predict"
)

// AddMeasurement appends a measured action and returns how many the store
// holds (measurements are kept; Measurements reads the latest). The write
// is durable when it returns nil, unless the store was opened with NoSync.
func (s *Store) AddMeasurement(r predict.ActionRecord) (int, error) {
	v, err := encode(r)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.update("add measurement", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeasurements)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		n = int(seq) // measurements are never deleted: the sequence counts them
		return b.Put(genKey(seq), v)
	})
	if err != nil {
		return 0, fmt.Errorf("adding measurement of %s/%d: %w", r.WorkflowID, r.Index, err)
	}
	return n, nil
}

// Measurements returns the latest limit measured actions (all when limit
// <= 0), oldest first.
func (s *Store) Measurements(limit int) ([]predict.ActionRecord, error) {
	var out []predict.ActionRecord
	err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketMeasurements).Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			r, err := decode[predict.ActionRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading measurements: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
