package swap

import (
	"errors"
	"fmt"
	"os"
)

// Status is the state of the zram device and of all swap areas.
type Status struct {
	Device    string      // "zram0"
	Present   bool        // /sys/block/<Device> exists
	Active    bool        // the device is an active swap area
	Ours      bool        // its swap header carries tenon's Label
	Swap      *SwapEntry  // its /proc/swaps line; nil if not active
	Swaps     []SwapEntry // every active swap area
	DiskSize  int64       // bytes; 0 when the device is not initialized
	Algorithm string      // selected compressor
	MM        *MMStat     // memory accounting; nil when not initialized
}

// Status reads /proc/swaps and the device's sysfs files and swap header.
func (m *Manager) Status() (Status, error) {
	st := Status{Device: m.Device}
	f, err := os.Open(m.Paths.ProcSwaps)
	if err != nil {
		return st, fmt.Errorf("reading swaps: %w", err)
	}
	st.Swaps, err = ParseSwaps(f)
	f.Close()
	if err != nil {
		return st, err
	}
	st.Swap = findSwap(st.Swaps, m.Paths.node(m.Device), m.Device)
	st.Active = st.Swap != nil
	if _, err := os.Stat(m.Paths.sys(m.Device, "")); errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	st.Present = true
	if st.DiskSize, err = m.readInt("disksize"); err != nil {
		return st, err
	}
	if f, err := os.Open(m.Paths.sys(m.Device, "comp_algorithm")); err == nil {
		_, st.Algorithm, _ = ParseCompAlgorithm(f)
		f.Close()
	}
	if st.DiskSize == 0 {
		return st, nil
	}
	if f, err := os.Open(m.Paths.sys(m.Device, "mm_stat")); err == nil {
		mm, err := ParseMMStat(f)
		f.Close()
		if err != nil {
			return st, err
		}
		st.MM = &mm
	}
	if f, err := os.Open(m.Paths.node(m.Device)); err == nil {
		h, err := ParseHeader(f)
		f.Close()
		st.Ours = err == nil && h.Label == Label
	}
	return st, nil
}
