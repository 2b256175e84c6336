package pageout

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/heap"
)

// heapEnv makes the test binary a heap process of N MiB (TestMain runs it
// instead of the tests). It waits for one line on stdin before allocating,
// so the test can place it in a cgroup first.
const heapEnv = "TENON_TEST_PAGEOUT_HEAP_MIB"

func TestMain(m *testing.M) {
	if v := os.Getenv(heapEnv); v != "" {
		mib, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		in := bufio.NewReader(os.Stdin)
		if _, err := in.ReadString('\n'); err != nil {
			os.Exit(2)
		}
		err = heap.RunHeap(context.Background(), heap.HeapOptions{
			SizeMiB: mib, TouchPercent: 20, Step: 50 * time.Millisecond,
			RandomPerPage: 1024, In: in, Out: os.Stdout, Signals: true,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
