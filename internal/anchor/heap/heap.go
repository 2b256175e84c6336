package heap

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/zeebo/xxh3"
)

// ErrCorrupt means a chunk no longer matches the hash recorded when it was
// written.
var ErrCorrupt = errors.New("heap: memory content changed")

const (
	chunkSize = 1 << 20
	pageSize  = 4096
)

// HeapOptions configures RunHeap. Zero fields take the defaults noted.
type HeapOptions struct {
	SizeMiB      int           // heap size (300)
	TouchPercent int           // share of chunks touched per step (20)
	Step         time.Duration // pause between steps (1 s)
	Steps        int           // stop after this many steps; 0 runs until ctx ends
	Seed         uint64        // generator seed
	// RandomPerPage is how many bytes at the start of each 4 KiB page are
	// random; the rest are zero. 4096 (the default) is incompressible; a
	// quarter page compresses about four times, like a typical
	// interpreter heap.
	RandomPerPage int
	In            io.Reader // each line asks for a full verification (nil: none)
	Signals       bool      // SIGUSR1 asks for a full verification
	Out           io.Writer // ready and verification lines (nil: discarded)
}

func (o *HeapOptions) defaults() {
	if o.SizeMiB <= 0 {
		o.SizeMiB = 300
	}
	if o.TouchPercent <= 0 {
		o.TouchPercent = 20
	}
	o.TouchPercent = min(o.TouchPercent, 100)
	if o.Step <= 0 {
		o.Step = time.Second
	}
	if o.RandomPerPage <= 0 || o.RandomPerPage > pageSize {
		o.RandomPerPage = pageSize
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// Heap is the allocated heap and what it must contain.
type Heap struct {
	opts   HeapOptions
	mem    []byte
	gens   []uint32
	hashes []uint64
	cursor int
	step   int
}

// New allocates and fills a heap.
func New(opts HeapOptions) *Heap {
	opts.defaults()
	n := opts.SizeMiB
	h := &Heap{opts: opts, mem: make([]byte, n*chunkSize), gens: make([]uint32, n), hashes: make([]uint64, n)}
	for c := range n {
		h.fill(c)
	}
	return h
}

func (h *Heap) chunk(c int) []byte { return h.mem[c*chunkSize : (c+1)*chunkSize] }

// fill writes chunk c's content for its generation and records its hash.
func (h *Heap) fill(c int) {
	b := h.chunk(c)
	x := h.opts.Seed ^ uint64(c)*0x9e3779b97f4a7c15 ^ uint64(h.gens[c])<<40
	for p := 0; p < len(b); p += pageSize {
		page := b[p : p+pageSize]
		for i := 0; i+8 <= h.opts.RandomPerPage; i += 8 {
			// splitmix64
			x += 0x9e3779b97f4a7c15
			z := x
			z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			binary.LittleEndian.PutUint64(page[i:], z^z>>31)
		}
		clear(page[h.opts.RandomPerPage&^7:])
	}
	h.hashes[c] = xxh3.Hash(b)
}

// check verifies chunk c against its recorded hash.
func (h *Heap) check(c int) error {
	if got := xxh3.Hash(h.chunk(c)); got != h.hashes[c] {
		return fmt.Errorf("chunk %d generation %d: hash %016x, recorded %016x: %w", c, h.gens[c], got, h.hashes[c], ErrCorrupt)
	}
	return nil
}

// Step touches the next TouchPercent of the chunks: verify, then rewrite.
func (h *Heap) Step() error {
	n := len(h.gens)
	k := max(1, n*h.opts.TouchPercent/100)
	for range k {
		c := h.cursor
		h.cursor = (h.cursor + 1) % n
		if err := h.check(c); err != nil {
			return err
		}
		h.gens[c]++
		h.fill(c)
	}
	h.step++
	return nil
}

// Verify checks every chunk and returns the heap's checksum.
func (h *Heap) Verify() (uint64, error) {
	for c := range h.gens {
		if err := h.check(c); err != nil {
			return 0, err
		}
	}
	return h.Sum(), nil
}

// Sum is the xxh3 of the recorded chunk hashes.
func (h *Heap) Sum() uint64 {
	b := make([]byte, 8*len(h.hashes))
	for i, v := range h.hashes {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return xxh3.Hash(b)
}

// Steps is the number of steps taken.
func (h *Heap) Steps() int { return h.step }

// RunHeap allocates the heap and steps it until ctx ends or Steps are done,
// verifying the whole heap on request. It returns nil on a clean stop and
// an error wrapping ErrCorrupt when content changed.
func RunHeap(ctx context.Context, opts HeapOptions) error {
	h := New(opts)
	opts = h.opts
	var mu sync.Mutex
	printf := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(opts.Out, format, a...)
	}
	printf("heap ready mib=%d chunks=%d sum=%016x\n", opts.SizeMiB, len(h.gens), h.Sum())

	verify := make(chan struct{}, 1)
	ask := func() {
		select {
		case verify <- struct{}{}:
		default:
		}
	}
	if opts.Signals {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGUSR1)
		defer signal.Stop(sig)
		go func() {
			for {
				select {
				case <-sig:
					ask()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	if opts.In != nil {
		go func() {
			sc := bufio.NewScanner(opts.In)
			for sc.Scan() {
				ask()
			}
		}()
	}

	tick := time.NewTicker(opts.Step)
	defer tick.Stop()
	for opts.Steps == 0 || h.Steps() < opts.Steps {
		select {
		case <-ctx.Done():
			return nil
		case <-verify:
			sum, err := h.Verify()
			if err != nil {
				printf("heap verify FAILED step=%d: %v\n", h.Steps(), err)
				return err
			}
			printf("heap verify ok step=%d sum=%016x\n", h.Steps(), sum)
		case <-tick.C:
			if err := h.Step(); err != nil {
				printf("heap verify FAILED step=%d: %v\n", h.Steps(), err)
				return err
			}
		}
	}
	sum, err := h.Verify()
	if err != nil {
		return err
	}
	printf("heap verify ok step=%d sum=%016x\n", h.Steps(), sum)
	return nil
}
