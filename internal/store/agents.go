package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// PutAgent creates or replaces a registry entry.
func (s *Store) PutAgent(a Agent) error {
	if a.ID == "" {
		return fmt.Errorf("%w: agent without id", ErrInvalid)
	}
	v, err := encode(a)
	if err != nil {
		return err
	}
	if err := s.update("put agent", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAgents).Put([]byte(a.ID), v)
	}); err != nil {
		return fmt.Errorf("committing agent %s: %w", a.ID, err)
	}
	return nil
}

// GetAgent returns the registry entry of id.
func (s *Store) GetAgent(id string) (Agent, error) {
	var a Agent
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAgents).Get([]byte(id))
		if v == nil {
			return ErrNotFound
		}
		var err error
		a, err = decode[Agent](v)
		return err
	})
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s: %w", id, err)
	}
	return a, nil
}

// ListAgents returns every registry entry in id order.
func (s *Store) ListAgents() ([]Agent, error) {
	var out []Agent
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAgents).ForEach(func(k, v []byte) error {
			a, err := decode[Agent](v)
			if err != nil {
				return fmt.Errorf("agent %s: %w", k, err)
			}
			out = append(out, a)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing agents: %w", err)
	}
	return out, nil
}

// DeleteAgent removes the registry entry and every record of id and
// returns the removed records (so their blobs can be collected). Deleting
// an unknown agent is not an error.
func (s *Store) DeleteAgent(id string) ([]Record, error) {
	var gone []Record
	err := s.update("delete agent", func(tx *bolt.Tx) error {
		gone = gone[:0]
		if err := tx.Bucket(bucketAgents).Delete([]byte(id)); err != nil {
			return err
		}
		rb := tx.Bucket(bucketRecords)
		b := rb.Bucket([]byte(id))
		if b == nil {
			return nil
		}
		if err := b.ForEach(func(_, v []byte) error {
			r, err := decode[Record](v)
			gone = append(gone, r)
			return err
		}); err != nil {
			return err
		}
		err := rb.DeleteBucket([]byte(id))
		if errors.Is(err, bolt.ErrBucketNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("deleting agent %s: %w", id, err)
	}
	return gone, nil
}
