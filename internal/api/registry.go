package api

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// registry persists the agents the server knows, so a restart recovers
// them. It is a bbolt database with one bucket, agent id -> JSON record.
// (internal/store's agent registry tracks residency for recovery records
// and has no room for an agent's creation request, hence this small one.)
type registry struct {
	db *bolt.DB
}

var bucketAgents = []byte("agents")

// record is what is persisted for one agent.
type record struct {
	V       int               `json:"v"`
	ID      string            `json:"id"`
	Backend string            `json:"backend"`
	Image   string            `json:"image,omitempty"`
	Env     []string          `json:"env,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Created time.Time         `json:"created"`
}

const recordVersion = 1

func openRegistry(path string) (*registry, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening registry %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketAgents)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("initializing registry %s: %w", path, err)
	}
	return &registry{db: db}, nil
}

func (r *registry) put(rec record) error {
	rec.V = recordVersion
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding agent %s: %w", rec.ID, err)
	}
	return r.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketAgents).Put([]byte(rec.ID), v) })
}

func (r *registry) delete(id string) error {
	return r.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketAgents).Delete([]byte(id)) })
}

func (r *registry) list() ([]record, error) {
	var out []record
	err := r.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAgents).ForEach(func(k, v []byte) error {
			var rec record
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("agent %s: %w", k, err)
			}
			if rec.V != recordVersion {
				return fmt.Errorf("agent %s: unknown record version %d", k, rec.V)
			}
			out = append(out, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing agents: %w", err)
	}
	return out, nil
}

func (r *registry) close() error { return r.db.Close() }
