package census

import "time"

// Kind tells page-cache pages from anonymous pages.
type Kind uint8

// Page kinds.
const (
	// File is a page-cache page (including shmem/tmpfs), keyed by
	// (device, inode, offset).
	File Kind = iota + 1
	// Anon is an anonymous page (heap, stack, private copy-on-write of a
	// file mapping), keyed by physical frame.
	Anon
)

// FileKey names one page of one file.
type FileKey struct {
	Dev, Ino uint64
	Off      int64 // byte offset, a multiple of the page size
}

// PageFlag notes page properties: THP and KSM are reported, not acted on;
// FlagShared makes a page count in SampleResult.SharedLayerBytes.
type PageFlag uint8

// Page flags.
const (
	FlagTHP PageFlag = 1 << iota // part of a transparent huge page
	FlagKSM                      // merged by KSM
	// FlagShared: a page-cache page of a file of the shared read-only
	// layer (Options.SharedDirs, or the siblings' overlay lower
	// directories with Options.DiscoverShared).
	FlagShared
)

// Page is one physical page of the swarm.
type Page struct {
	Kind Kind
	File FileKey // for File pages
	PFN  uint64  // for Anon pages (and mapped File pages, informational)
	Hash Hash
	// Holders are the indices into Snapshot.Siblings of the siblings that
	// map this page (or, for file pages, own the directory it was found
	// in). Empty for pages only the shared layer holds.
	Holders []int32
	Flags   PageFlag
}

// Stats counts what a sample saw and skipped.
type Stats struct {
	Processes    int // processes read
	Vanished     int // processes that exited before they could be read
	Files        int // distinct files scanned with mincore
	ZeroPages    int // present pages mapping the (huge) zero page, left out
	SpecialPages int // present pages of special mappings ([vdso], ...), left out
	THPPages     int // pages that are part of a transparent huge page
	KSMPages     int // pages merged by KSM
	Unreadable   int // present pages whose content could not be read, left out
}

// Snapshot is one census sample of the swarm.
type Snapshot struct {
	Taken    time.Time     // when the sample began
	Elapsed  time.Duration // Taken − Options.Start (the swarm's age)
	Siblings []string      // sibling names, indexed by Page.Holders
	// SharedDirs are the directories scanned as the shared read-only
	// layer (Options.SharedDirs and those DiscoverShared found).
	SharedDirs []string
	PageSize   int
	Pages      []Page
	Freeze     time.Duration // how long the siblings were frozen
	Duration   time.Duration // how long the sample took
	Stats      Stats
}
