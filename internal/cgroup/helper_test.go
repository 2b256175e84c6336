package cgroup

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a workload: it waits for a line on
// stdin (so the test can move it into a group first), allocates and touches
// the number of MiB named in the variable, prints "ready" and sleeps.
const helperEnv = "TENON_TEST_CGROUP_ALLOC_MIB"

func TestMain(m *testing.M) {
	if v := os.Getenv(helperEnv); v != "" {
		os.Exit(allocHelper(v))
	}
	os.Exit(m.Run())
}

// sink keeps the allocation reachable.
var sink [][]byte

func allocHelper(v string) int {
	mib, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad", helperEnv, v)
		return 2
	}
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 3
	}
	for i := 0; i < mib; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		sink = append(sink, b)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
	return 0
}
