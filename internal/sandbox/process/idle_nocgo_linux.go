//go:build linux && !cgo

package process

// idleLoop: built without cgo, this binary has no idle loop
// (idle_linux.go) and every executor stays resident.
const idleLoop = false
