package store

import (
	"fmt"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketAgents  = []byte("agents")
	bucketRecords = []byte("records") // one sub-bucket per agent, keyed by big-endian generation
	// bucketMeasurements holds measured actions, keyed by big-endian sequence.
	bucketMeasurements = []byte("measurements")
)

// Options tune Open.
type Options struct {
	// LockTimeout bounds the wait for the database file lock; 0 means 2 s.
	LockTimeout time.Duration
	// BeforeCommit, when set, runs inside every write transaction just
	// before it commits; a non-nil error aborts the transaction and is
	// returned. It exists for fault injection.
	BeforeCommit func(op string) error
	// NoSync skips the fsync of every commit: for data whose last writes
	// may be lost in a crash (the daemon's measurements), not for state.
	NoSync bool
}

// Store is the durable state. It is safe for concurrent use.
type Store struct {
	db     *bolt.DB
	opt    Options
	closed atomic.Bool
}

// Open opens (creating if missing) the database at path.
func Open(path string) (*Store, error) { return OpenWith(path, Options{}) }

// OpenWith opens the database at path with options.
func OpenWith(path string, opt Options) (*Store, error) {
	if opt.LockTimeout == 0 {
		opt.LockTimeout = 2 * time.Second
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opt.LockTimeout, NoSync: opt.NoSync})
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketAgents, bucketRecords, bucketMeasurements} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initializing store %s: %w", path, err)
	}
	return &Store{db: db, opt: opt}, nil
}

// SetBeforeCommit replaces the fault-injection hook (nil removes it).
func (s *Store) SetBeforeCommit(f func(op string) error) { s.opt.BeforeCommit = f }

// Close closes the database.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing store: %w", err)
	}
	return nil
}

// update runs fn in a write transaction, then the fault hook, then commits.
func (s *Store) update(op string, fn func(tx *bolt.Tx) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if h := s.opt.BeforeCommit; h != nil {
			if err := h(op); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
		}
		return nil
	})
}

func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.db.View(fn)
}
