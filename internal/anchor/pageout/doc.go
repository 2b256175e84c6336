// Package pageout pages a live process's private memory out to swap and
// back in: the seed's pageout and pagein intents for the harness arena H,
// done on a host kernel with process_madvise(2).
//
// PageOut reads /proc/PID/maps, keeps the private mappings that hold
// anonymous memory (anonymous regions, heap, stack and private writable file
// mappings, whose written pages are anonymous copies) and passes them to
// process_madvise(pidfd, iovecs, MADV_PAGEOUT) in batches of at most IOV_MAX
// ranges. On cgroup v2 it then writes the group's memory.current to
// memory.reclaim when the Pager names the group. Paging out needs swap
// (anonymous pages have nowhere else to go) and CAP_SYS_NICE over the
// target; it works on a frozen process and on any cgroup version.
//
// PageIn prefetches the same ranges so that the resumed process does not
// take a fault per page. MADV_WILLNEED on swapped anonymous memory only
// reads the pages into the swap cache (they are not mapped: RssAnon stays
// at its paged-out level and every first access is still a fault); reading
// /proc/PID/mem faults each page back in through get_user_pages exactly as
// the process's own access would, so RssAnon returns to its level. PageIn
// reads by default, only the pages /proc/PID/pagemap marks swapped, so
// memory the process never touched is not populated (see Prefetch for the
// measurements).
//
// Residency is read from /proc/PID/status (RssAnon, RssFile, VmSwap).
// Every /proc path is injectable; the parsers take an io.Reader.
//
// The package owns nothing: it never stops, signals or moves a process, and
// the caller freezes and thaws around it.
package pageout
