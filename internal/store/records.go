package store

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

func genKey(g uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], g)
	return k[:]
}

// PutRecord commits a recovery record. The record's generation must be
// greater than the agent's latest; the commit is durable when it returns nil.
func (s *Store) PutRecord(r Record) error {
	if r.AgentID == "" {
		return fmt.Errorf("%w: record without agent id", ErrInvalid)
	}
	v, err := encode(r)
	if err != nil {
		return err
	}
	err = s.update("put record", func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketRecords).CreateBucketIfNotExists([]byte(r.AgentID))
		if err != nil {
			return err
		}
		if k, _ := b.Cursor().Last(); k != nil && binary.BigEndian.Uint64(k) >= r.Generation {
			return fmt.Errorf("%w: generation %d, latest is %d", ErrStaleGeneration, r.Generation, binary.BigEndian.Uint64(k))
		}
		return b.Put(genKey(r.Generation), v)
	})
	if err != nil {
		return fmt.Errorf("committing record %s/%d: %w", r.AgentID, r.Generation, err)
	}
	return nil
}

// LatestRecord returns the agent's record with the highest generation.
func (s *Store) LatestRecord(agentID string) (Record, error) {
	var r Record
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords).Bucket([]byte(agentID))
		if b == nil {
			return ErrNotFound
		}
		_, v := b.Cursor().Last()
		if v == nil {
			return ErrNotFound
		}
		var err error
		r, err = decode[Record](v)
		return err
	})
	if err != nil {
		return Record{}, fmt.Errorf("latest record of %s: %w", agentID, err)
	}
	return r, nil
}

// Records returns every record of the agent in generation order.
func (s *Store) Records(agentID string) ([]Record, error) {
	var out []Record
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords).Bucket([]byte(agentID))
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			r, err := decode[Record](v)
			out = append(out, r)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("records of %s: %w", agentID, err)
	}
	return out, nil
}

// PruneRecords deletes the agent's records with a generation below keepFrom
// and returns them (so their blobs can be collected).
func (s *Store) PruneRecords(agentID string, keepFrom uint64) ([]Record, error) {
	var gone []Record
	err := s.update("prune records", func(tx *bolt.Tx) error {
		gone = gone[:0]
		b := tx.Bucket(bucketRecords).Bucket([]byte(agentID))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil && binary.BigEndian.Uint64(k) < keepFrom; k, v = c.Next() {
			r, err := decode[Record](v)
			if err != nil {
				return err
			}
			gone = append(gone, r)
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pruning records of %s: %w", agentID, err)
	}
	return gone, nil
}

// ReferencedDigests returns the digest of every artifact of every record.
func (s *Store) ReferencedDigests() (map[string]bool, error) {
	out := map[string]bool{}
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecords).ForEachBucket(func(k []byte) error {
			return tx.Bucket(bucketRecords).Bucket(k).ForEach(func(_, v []byte) error {
				r, err := decode[Record](v)
				if err != nil {
					return err
				}
				for _, a := range r.Artifacts {
					out[a.Ref.Digest] = true
				}
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing referenced digests: %w", err)
	}
	return out, nil
}
