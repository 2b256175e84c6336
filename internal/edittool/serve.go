package edittool

import (
	"fmt"
	"os"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// MaybeServe runs `tenon tool edit FLAGS` in the working directory and
// exits when this process was started as that command; otherwise it
// returns at once. Test binaries that stand in for the tenon binary inside
// sandboxes call it first in TestMain, as cmd/tenon routes the command.
func MaybeServe() {
	if len(os.Args) < 3 || os.Args[1] != "tool" || os.Args[2] != "edit" {
		return
	}
	var e trajectory.FileEdit
	err := NewFlagSet("tenon tool edit", &e).Parse(os.Args[3:])
	if err == nil {
		err = Apply(".", e)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenon tool edit:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
