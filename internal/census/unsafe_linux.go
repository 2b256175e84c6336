package census

import "unsafe"

// uintptrOf is the address of the first byte of a mapping.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
