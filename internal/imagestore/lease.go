package imagestore

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// holdFile is what one holder uses: holders/<name>.json, valid while a
// process holds the flock of holders/<name>.lock.
type holdFile struct {
	name   string
	Images map[string]string `json:"images,omitempty"` // key (a sandbox, an agent) → image id
	Layers []string          `json:"layers,omitempty"` // diff ids being unpacked
}

// holder is this Store's own holder file.
type holder struct {
	mu     sync.Mutex
	name   string
	lock   *os.File
	images map[string]string
	layers map[string]int
}

// Hold records that key (a sandbox id, an agent) uses the image ref names,
// until Release(key); Remove refuses the image meanwhile, also from another
// process. A second Hold of the same key replaces the first.
func (s *Store) Hold(key, ref string) (Image, error) {
	unlock, err := s.lock()
	if err != nil {
		return Image{}, err
	}
	defer unlock()
	im, err := s.Get(ref)
	if err != nil {
		return Image{}, err
	}
	h, err := s.ownHolder()
	if err != nil {
		return Image{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.images[key] = im.ID
	return im, s.writeHolder(h)
}

// Release ends key's hold; releasing an unknown key does nothing.
func (s *Store) Release(key string) error {
	if s.holder == nil {
		return nil // this Store holds nothing
	}
	h := s.holder
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.images[key]; !ok {
		return nil
	}
	delete(h.images, key)
	return s.writeHolder(h)
}

// holdLayers keeps GC off layers being unpacked (not yet in a record).
func (s *Store) holdLayers(ids []string, add bool) error {
	h, err := s.ownHolder()
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if add {
			h.layers[id]++
		} else if h.layers[id]--; h.layers[id] <= 0 {
			delete(h.layers, id)
		}
	}
	return s.writeHolder(h)
}

// Close ends this Store's holds (its holder file goes).
func (s *Store) Close() error {
	if s.holder == nil {
		return nil
	}
	h := s.holder
	h.mu.Lock()
	defer h.mu.Unlock()
	err := errors.Join(
		ignoreMissing(os.Remove(filepath.Join(s.holdersDir(), h.name+".json"))),
		ignoreMissing(os.Remove(filepath.Join(s.holdersDir(), h.name+".lock"))),
	)
	h.lock.Close()
	s.holder = nil
	return err
}

func ignoreMissing(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ownHolder creates this Store's holder file on first use.
func (s *Store) ownHolder() (*holder, error) {
	if s.holder != nil || s.holdErr != nil {
		return s.holder, s.holdErr
	}
	if err := s.ensure(); err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
	// The lock file appears under its .lock name only once it is locked:
	// made there directly, another process's liveHolds could find it
	// unlocked between the create and the flock, take its holder for dead
	// and remove it, and this holder's holds would go unseen. A crash
	// before the rename leaves the .lock.tmp file, which liveHolds removes
	// once it is unlocked and a minute old.
	final := filepath.Join(s.holdersDir(), name+".lock")
	tmp := final + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
	if err == nil {
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			err = os.Rename(tmp, final)
		}
		if err != nil {
			f.Close()
			_ = os.Remove(tmp)
		}
	}
	if err != nil {
		s.holdErr = fmt.Errorf("imagestore: holder file: %w", err)
		return nil, s.holdErr
	}
	s.holder = &holder{name: name, lock: f, images: map[string]string{}, layers: map[string]int{}}
	return s.holder, nil
}

func (s *Store) writeHolder(h *holder) error {
	hf := holdFile{Images: maps.Clone(h.images)}
	for id := range h.layers {
		hf.Layers = append(hf.Layers, id)
	}
	b, err := json.Marshal(hf)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(s.holdersDir(), h.name+".json"), b)
}

// liveHolds reads the holder files of live processes and removes those of
// dead ones (whose lock nobody holds).
func (s *Store) liveHolds() ([]holdFile, error) {
	ents, err := os.ReadDir(s.holdersDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	var out []holdFile
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".lock.tmp") {
			s.removeStaleTmp(filepath.Join(s.holdersDir(), e.Name()))
			continue
		}
		name, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok {
			continue
		}
		lp := filepath.Join(s.holdersDir(), e.Name())
		jp := filepath.Join(s.holdersDir(), name+".json")
		f, err := os.OpenFile(lp, os.O_RDWR, 0)
		if err != nil {
			continue // removed meanwhile
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			// Nobody holds it: its process is gone.
			_ = os.Remove(jp)
			_ = os.Remove(lp)
			f.Close()
			continue
		}
		f.Close()
		hf := holdFile{name: name}
		if b, err := os.ReadFile(jp); err == nil {
			if err := json.Unmarshal(b, &hf); err != nil {
				return nil, fmt.Errorf("imagestore: holder %s: %w", jp, err)
			}
		}
		out = append(out, hf)
	}
	return out, nil
}

// staleTmpAge is how old an unlocked .lock.tmp holder file must be for
// liveHolds to remove it: its maker locks it moments after creating it,
// then renames it; one left unlocked that long is a crash's leftover.
const staleTmpAge = time.Minute

// removeStaleTmp removes the holder file p (a .lock.tmp) when nobody
// holds its lock and it is older than staleTmpAge.
func (s *Store) removeStaleTmp(p string) {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || time.Since(fi.ModTime()) < staleTmpAge {
		return
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		_ = os.Remove(p)
	}
}
