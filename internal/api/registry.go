package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// registry persists the agents the server knows, so a restart recovers
// them, and the model-wait lengths learned per agent (waits.go). It is a
// bbolt database with two buckets: agents (agent id -> JSON record) and
// waits (agent id -> learned wait in nanoseconds, decimal; allWaitsKey
// for the average over all agents).
// (internal/store's agent registry tracks residency for recovery records
// and has no room for an agent's creation request, hence this small one.)
type registry struct {
	db *bolt.DB
}

var (
	bucketAgents = []byte("agents")
	bucketWaits  = []byte("waits")
)

// allWaitsKey keys the average wait over all agents; no agent id is "*".
const allWaitsKey = "*"

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
		for _, b := range [][]byte{bucketAgents, bucketWaits} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
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

// delete forgets agent id and its learned wait.
func (r *registry) delete(id string) error {
	return r.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketWaits).Delete([]byte(id)); err != nil {
			return err
		}
		return tx.Bucket(bucketAgents).Delete([]byte(id))
	})
}

// putWaits stores learned waits (allWaitsKey for the average over all
// agents) in one transaction; those of agents no longer registered are
// skipped.
func (r *registry) putWaits(waits map[string]time.Duration) error {
	if len(waits) == 0 {
		return nil
	}
	return r.db.Update(func(tx *bolt.Tx) error {
		agents, b := tx.Bucket(bucketAgents), tx.Bucket(bucketWaits)
		for id, d := range waits {
			if id != allWaitsKey && agents.Get([]byte(id)) == nil {
				continue // deleted since it was learned
			}
			if err := b.Put([]byte(id), strconv.AppendInt(nil, int64(d), 10)); err != nil {
				return err
			}
		}
		return nil
	})
}

// waits returns the stored waits (allWaitsKey: the average over all
// agents).
func (r *registry) waits() (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	err := r.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWaits).ForEach(func(k, v []byte) error {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("learned wait of %s: %w", k, err)
			}
			out[string(k)] = time.Duration(n)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading learned waits: %w", err)
	}
	return out, nil
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
			// The id names the agent's workspace directory and sandbox:
			// checked as a request's id is, whatever wrote the file.
			if rec.ID != string(k) || !idPattern.MatchString(rec.ID) {
				return fmt.Errorf("agent %q: record names id %q, not an agent id (ag- and 12 hex digits) matching its key", k, rec.ID)
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
