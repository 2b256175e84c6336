package census

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

var sink byte

// ZeroPFN finds the frame number of the kernel's zero page by read-faulting
// a fresh anonymous page of this process and reading its pagemap entry.
// It returns 0 when pagemap hides frame numbers.
func ZeroPFN(proc string) (uint64, error) {
	ps := os.Getpagesize()
	m, err := unix.Mmap(-1, 0, ps, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return 0, fmt.Errorf("mapping probe page: %w", err)
	}
	defer unix.Munmap(m)
	sink += m[0] // read fault: maps the zero page
	f, err := os.Open(filepath.Join(proc, "self", "pagemap"))
	if err != nil {
		return 0, fmt.Errorf("opening own pagemap: %w", err)
	}
	defer f.Close()
	addr := uint64(uintptrOf(m))
	e, err := ReadPagemap(f, addr, 1, uint64(ps))
	if err != nil {
		return 0, err
	}
	return e[0].PFN(), nil
}
