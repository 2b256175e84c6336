// Package ksm drives kernel same-page merging as the census's comparison
// point: it reads /sys/kernel/mm/ksm counters, starts and stops the
// scanner (restoring the previous settings), waits for full scans, and
// execs a program with PR_SET_MEMORY_MERGE so every anonymous page of it
// and its children is a merge candidate. The sysfs directory is injectable.
package ksm
