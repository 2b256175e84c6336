package procfs

import "errors"

// ErrMapsFormat means a /proc/PID/maps line could not be parsed.
var ErrMapsFormat = errors.New("procfs: malformed maps line")
