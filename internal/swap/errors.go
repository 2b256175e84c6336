package swap

import "errors"

// Sentinel errors. Callers test them with errors.Is; the text is meant for people.
var (
	// ErrNoZram means the zram device is absent and could not be created:
	// the kernel lacks zram (CONFIG_ZRAM) or the module could not be loaded.
	ErrNoZram = errors.New("swap: no zram device (load the zram module: modprobe zram)")

	// ErrForeignSwap means the zram device is an active swap area that tenon
	// did not set up; tenon leaves it alone. Turn it off with swapoff first.
	ErrForeignSwap = errors.New("swap: zram device is active swap not set up by tenon (run swapoff on it first)")

	// ErrBusy means the zram device is in use (mounted, held by another block
	// device, or open) and cannot be reset.
	ErrBusy = errors.New("swap: zram device is in use")

	// ErrBadSize means the requested swap size is too small or not a whole
	// number of pages.
	ErrBadSize = errors.New("swap: invalid swap size")

	// ErrNoHeader means a device or file holds no swap header.
	ErrNoHeader = errors.New("swap: no swap header")

	// ErrUnsupported means the platform has no swapon(2).
	ErrUnsupported = errors.New("swap: unsupported platform")
)
