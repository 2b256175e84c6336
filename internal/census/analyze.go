package census

// Classes splits the duplicate of a sample into the seed's four sources.
type Classes struct {
	// FileSameContent: page-cache pages whose content another page-cache
	// page already holds (mostly a different inode: copied repos, guest
	// images; repeats inside one file land here too).
	FileSameContent int64 `json:"file_same_content"`
	// AnonEqualsFile: anonymous pages whose content equals some page-cache
	// page (read buffers, file bytes copied into a heap, a guest's page
	// cache).
	AnonEqualsFile int64 `json:"anon_equals_file"`
	// HeapBirth: private anonymous duplicates already duplicated in the
	// first snapshot of the series.
	HeapBirth int64 `json:"heap_birth"`
	// HeapLater: private anonymous duplicates that appeared later.
	HeapLater int64 `json:"heap_later"`
}

// Sum is the total of the four classes, equal to the duplicate.
func (c Classes) Sum() int64 {
	return c.FileSameContent + c.AnonEqualsFile + c.HeapBirth + c.HeapLater
}

// SampleResult is the census of one snapshot, in bytes.
type SampleResult struct {
	TimeS          float64 `json:"t_s"`
	N              int     `json:"n"`
	Config         string  `json:"config"`
	RealBytes      int64   `json:"real_bytes"`
	OracleBytes    int64   `json:"oracle_bytes"`
	DuplicateBytes int64   `json:"duplicate_bytes"`
	Classes        Classes `json:"classes"`
	HeldByAllBytes int64   `json:"held_by_all_bytes"`
	// SharedLayerBytes is the page cache of the shared read-only layer's
	// files (FlagShared: the image layers every sandbox of an image
	// mounts as overlay lower directories), each page once however many
	// siblings map or read it; part of RealBytes.
	SharedLayerBytes int64 `json:"shared_layer_bytes"`
}

// Share is b as a fraction of the real occupancy (0 when nothing is real).
func (r SampleResult) Share(b int64) float64 {
	if r.RealBytes == 0 {
		return 0
	}
	return float64(b) / float64(r.RealBytes)
}

// Report is the JSON document of a census run.
type Report struct {
	Samples []SampleResult `json:"samples"`
}

// group is every distinct physical page holding one content.
type group struct {
	file, anon int64
	holders    map[int32]struct{}
}

// Analyze computes the census of each snapshot of one series (one
// configuration, one swarm, samples in time order). It is a pure function
// of the page records.
//
// Real occupancy counts file pages by (dev, inode, offset) and anonymous
// pages by frame, each once. The oracle counts distinct contents. The
// duplicate, real − oracle, is assigned content by content: of the F file
// pages and A anonymous pages holding one content, one page is the copy the
// oracle keeps, and the others are classed in this order, so every
// duplicate page falls in exactly one class and the classes add up to the
// duplicate:
//
//  1. if F > 0, a file page is kept; the other F−1 file pages are
//     file_same_content and all A anonymous pages are anon_equals_file;
//  2. otherwise an anonymous page is kept and the A−1 others are heap
//     duplicates: up to the number of heap duplicates the same content had
//     in the first snapshot they are heap_birth, the rest heap_later (in
//     the first snapshot every heap duplicate is heap_birth).
//
// held_by_all_bytes counts contents that every sibling of the snapshot
// holds (Page.Holders), once per content.
func Analyze(snaps []*Snapshot, config string) []SampleResult {
	out := make([]SampleResult, 0, len(snaps))
	var birth map[Hash]int64
	for i, s := range snaps {
		groups := groupByContent(s)
		r, heap := classify(groups, birth, i == 0, len(s.Siblings))
		ps := int64(s.PageSize)
		r.RealBytes *= ps
		r.OracleBytes *= ps
		r.DuplicateBytes *= ps
		r.HeldByAllBytes *= ps
		r.SharedLayerBytes = sharedPages(s) * ps
		r.Classes.FileSameContent *= ps
		r.Classes.AnonEqualsFile *= ps
		r.Classes.HeapBirth *= ps
		r.Classes.HeapLater *= ps
		r.TimeS = s.Elapsed.Seconds()
		r.N = len(s.Siblings)
		r.Config = config
		if i == 0 {
			birth = heap
		}
		out = append(out, r)
	}
	return out
}

// sharedPages counts the distinct page-cache pages of the shared layer.
func sharedPages(s *Snapshot) int64 {
	seen := make(map[FileKey]bool)
	for _, p := range s.Pages {
		if p.Kind == File && p.Flags&FlagShared != 0 {
			seen[p.File] = true
		}
	}
	return int64(len(seen))
}

// groupByContent folds the snapshot's pages into distinct physical pages
// (merging holders of repeated records) and groups them by content.
func groupByContent(s *Snapshot) map[Hash]*group {
	type fileSeen = FileKey
	files := make(map[fileSeen]Hash)
	frames := make(map[uint64]Hash)
	groups := make(map[Hash]*group)
	for i := range s.Pages {
		p := &s.Pages[i]
		g := groups[p.Hash]
		if g == nil {
			g = &group{holders: make(map[int32]struct{})}
			groups[p.Hash] = g
		}
		for _, h := range p.Holders {
			g.holders[h] = struct{}{}
		}
		switch p.Kind {
		case File:
			if _, dup := files[p.File]; dup {
				continue
			}
			files[p.File] = p.Hash
			g.file++
		case Anon:
			if _, dup := frames[p.PFN]; dup {
				continue
			}
			frames[p.PFN] = p.Hash
			g.anon++
		}
	}
	return groups
}

// classify counts pages (not bytes) and returns the heap duplicates per
// content for use as the birth reference.
func classify(groups map[Hash]*group, birth map[Hash]int64, first bool, n int) (SampleResult, map[Hash]int64) {
	var r SampleResult
	heap := make(map[Hash]int64)
	for h, g := range groups {
		total := g.file + g.anon
		if total == 0 {
			continue
		}
		r.RealBytes += total
		r.OracleBytes++
		r.DuplicateBytes += total - 1
		if n > 0 && len(g.holders) == n {
			r.HeldByAllBytes++
		}
		if g.file > 0 {
			r.Classes.FileSameContent += g.file - 1
			r.Classes.AnonEqualsFile += g.anon
			continue
		}
		dup := g.anon - 1
		if dup == 0 {
			continue
		}
		heap[h] = dup
		b := dup
		if !first {
			b = min(dup, birth[h])
		}
		r.Classes.HeapBirth += b
		r.Classes.HeapLater += dup - b
	}
	return r, heap
}
