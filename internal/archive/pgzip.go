package archive

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime"
	"sync"
)

// chunkSize is the uncompressed size of one gzip member. Members are
// compressed in parallel and concatenated in order; a multistream gzip
// reader (the standard one) reads them back as one stream. Fixed chunk
// boundaries keep the output deterministic.
const chunkSize = 1 << 20

// parallelGzip is an io.WriteCloser compressing fixed-size chunks as
// independent gzip members on several goroutines, writing them in order.
type parallelGzip struct {
	w         io.Writer
	level     int
	buf       []byte
	queue     chan chan []byte // results in submission order
	slots     chan struct{}    // bounds chunks in flight
	done      chan struct{}
	mu        sync.Mutex
	err       error
	wrote     bool
	pool      sync.Pool // *gzip.Writer at level
	storePool sync.Pool // *gzip.Writer at NoCompression
}

func newParallelGzip(w io.Writer, level int) *parallelGzip {
	n := max(runtime.GOMAXPROCS(0), 1)
	z := &parallelGzip{
		w:     w,
		level: level,
		buf:   make([]byte, 0, chunkSize),
		queue: make(chan chan []byte, 2*n),
		slots: make(chan struct{}, n+1),
		done:  make(chan struct{}),
	}
	go z.drain()
	return z
}

func (z *parallelGzip) drain() {
	defer close(z.done)
	for ch := range z.queue {
		b := <-ch
		if z.error() != nil {
			continue
		}
		if _, err := z.w.Write(b); err != nil {
			z.setError(err)
		}
	}
}

func (z *parallelGzip) error() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.err
}

func (z *parallelGzip) setError(err error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.err == nil {
		z.err = err
	}
}

func (z *parallelGzip) Write(p []byte) (int, error) {
	if err := z.error(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), chunkSize-len(z.buf))
		z.buf = append(z.buf, p[:k]...)
		p = p[k:]
		if len(z.buf) == chunkSize {
			z.submit()
		}
	}
	return n, nil
}

func (z *parallelGzip) submit() {
	chunk := z.buf
	z.buf = make([]byte, 0, chunkSize)
	z.wrote = true
	ch := make(chan []byte, 1)
	z.slots <- struct{}{}
	z.queue <- ch
	go func() {
		defer func() { <-z.slots }()
		var out bytes.Buffer
		out.Grow(len(chunk)/2 + 64)
		pool, level := &z.pool, z.level
		if incompressible(chunk) {
			pool, level = &z.storePool, gzip.NoCompression
		}
		gw, _ := pool.Get().(*gzip.Writer)
		if gw == nil {
			var err error
			if gw, err = gzip.NewWriterLevel(&out, level); err != nil {
				z.setError(err)
				ch <- nil
				return
			}
		} else {
			gw.Reset(&out)
		}
		_, err := gw.Write(chunk)
		if err == nil {
			err = gw.Close()
		}
		pool.Put(gw)
		if err != nil {
			z.setError(err)
		}
		ch <- out.Bytes()
	}()
}

// Close compresses what is buffered, waits for every member to be written
// and returns the first error.
func (z *parallelGzip) Close() error {
	if len(z.buf) > 0 || !z.wrote {
		z.submit()
	}
	close(z.queue)
	<-z.done
	return z.error()
}

// sampleSize is the prefix of a chunk compressed to judge the whole chunk.
const sampleSize = 16 << 10

var samplePool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.HuffmanOnly)
	return w
}}

// incompressible reports whether a chunk's sample does not shrink by at
// least 5% under Huffman coding: already compressed or random data, which
// is then stored rather than deflated (saving most of the CPU). The choice
// depends only on the bytes, so output stays deterministic.
func incompressible(chunk []byte) bool {
	if len(chunk) < 2*sampleSize {
		return false
	}
	cw := &countWriter{w: io.Discard}
	w := samplePool.Get().(*gzip.Writer)
	defer samplePool.Put(w)
	w.Reset(cw)
	w.Write(chunk[:sampleSize])
	w.Close()
	return cw.n > sampleSize*95/100
}
