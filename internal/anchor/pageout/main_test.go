package pageout

import (
	"os"
	"testing"

	"github.com/tenon-dev/tenon/internal/anchor/anchortest"
)

// heapEnv makes the test binary a heap process of N MiB (TestMain runs it
// instead of the tests; see anchortest.RunHeapChild).
const heapEnv = "TENON_TEST_PAGEOUT_HEAP_MIB"

func TestMain(m *testing.M) {
	anchortest.RunHeapChild(heapEnv)
	os.Exit(m.Run())
}
