// Package swap manages a zram swap device for tests and for
// `tenon swap enable|disable|status`.
//
// Enable turns /sys/block/zram0 into a compressed swap device: it loads or
// hot-adds the device if needed, resets it if it is initialized but unused,
// picks zstd or lz4 when the kernel offers them, sets the disk size, writes a
// swap header labeled "tenon" (no mkswap needed) and calls swapon(2) with a
// high priority. Disable calls swapoff(2) and resets the device. Both refuse
// to touch a zram swap device that tenon did not set up (its header label is
// not "tenon"). Status reads /proc/swaps and the device's sysfs files.
//
// The package owns the one zram device it is given and nothing else: it never
// turns off other swap areas and never resets a device that is mounted, held
// or active as someone else's swap. Every /sys, /proc and /dev path is
// injectable through Paths; the parsers take an io.Reader.
package swap
