// Package heap is the harness stand-in of `tenon harness heap`: a process
// whose memory is a large heap of known content, used to prove that paging
// a harness out and back in (package pageout) loses nothing.
//
// RunHeap allocates SizeMiB MiB in 1 MiB chunks, fills each from a
// deterministic generator (seed, chunk, generation) and records the xxh3
// hash of every chunk. Each step it touches TouchPercent of the chunks, in
// a window that rotates over the whole heap: it verifies the chunk against
// its recorded hash (reading every byte), then rewrites it with the next
// generation and records the new hash. On a line on In or on SIGUSR1 it
// verifies the whole heap and prints the checksum, the xxh3 of the chunk
// hashes, which depends only on the seed and the generations.
//
// Output lines (on Out), for the program that drives it:
//
//	heap ready mib=300 chunks=300 sum=0123456789abcdef
//	heap verify ok step=12 sum=0123456789abcdef
//
// A mismatch prints "heap verify FAILED ..." and RunHeap returns an error
// wrapping ErrCorrupt. The package owns only its own process's memory.
package heap
