//go:build !linux

package pageout

// PageOut needs Linux.
func (p *Pager) PageOut(pid int) (Stats, error) { return Stats{}, ErrNoProcessMadvise }

// PageIn needs Linux.
func (p *Pager) PageIn(pid int) (Stats, error) { return Stats{}, ErrNoProcessMadvise }
