package scope

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// allocEnv makes the test binary a tool that allocates and touches N MiB,
// prints its /proc/self/cgroup and exits (TestMain runs it instead of tests).
const allocEnv = "TENON_TEST_SCOPE_ALLOC_MIB"

var sink []byte

func TestMain(m *testing.M) {
	if v := os.Getenv(allocEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		sink = make([]byte, n<<20)
		for i := 0; i < len(sink); i += 4096 {
			sink[i] = byte(i)
		}
		b, _ := os.ReadFile("/proc/self/cgroup")
		os.Stdout.Write(b)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
