package memtool

import (
	"context"
	"fmt"
	"os"
)

// MaybeServe runs `tenon tool mem FLAGS` and exits when this process was
// started as that command; otherwise it returns at once. Test binaries that
// stand in for the tenon binary inside sandboxes call it first in TestMain,
// as cmd/tenon routes the command.
func MaybeServe() {
	if len(os.Args) < 3 || os.Args[1] != "tool" || os.Args[2] != "mem" {
		return
	}
	o, err := ParseArgs(os.Args[3:])
	if err == nil {
		err = Run(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenon tool mem:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
