// Package census measures how much memory a swarm of sibling sandboxes still
// duplicates (seed 002, "How Much Memory Can an Agent Sandbox Swarm Still
// Share?").
//
// A census sample freezes every sibling, reads each process's
// /proc/PID/maps and /proc/PID/pagemap for present pages, tells anonymous
// from file pages (pagemap file bit, /proc/kpageflags ANON), leaves out the
// zero page, deduplicates anonymous pages by physical frame, and hashes each
// present page's content (xxh3-128) through /proc/PID/mem. Page-cache pages
// are found with mincore over every file the swarm can see (mapped files and
// caller-given directories), keyed by (device, inode, offset), and hashed by
// reading the resident page. A file mapped through an overlay (a sandbox of
// an image) is keyed by the layer file below it, whose page cache it is;
// the lower directories of the siblings' overlays are the shared read-only
// layer (Options.DiscoverShared), whose pages Analyze reports apart.
//
// Analyze turns a series of snapshots into the seed's numbers: real
// occupancy (file pages by key + distinct anonymous frames), the content
// oracle (distinct contents), the duplicate (real − oracle) and its four
// classes, and the bytes every sibling holds.
//
// The package owns the readers (pagemap, kpageflags, mincore; maps are
// parsed by internal/procfs), the sampler, the analysis and its renderings
// (JSON, table, PNG).
// It does not start sandboxes or create cgroups: the caller passes pids,
// cgroup directories and a Freezer. Every /proc and /sys path is injectable
// through Options.
package census
