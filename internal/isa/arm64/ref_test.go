package arm64

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// The data types and buffers of the tests. Their reference is
// kerneltest.Reference: the float64 oracle (internal/oracle), which walks
// the Problem itself (not the canonical plan), so that canonicalisation
// bugs show up too.

// pairs are the src:dst data type pairs ReduceMean supports.
var pairs = kerneltest.FloatPairs

// intPairs are the src:dst pairs of 8-bit integer data: s8 or u8 src,
// every dst type.
var intPairs = kerneltest.Int8SrcPairs

// floatTypes are the float data types.
var floatTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}

// buffersFor allocates and fills src, dst and the operand buffers of p:
// src and operands with fill (specials says whether NaN and ±Inf may
// appear in each), dst with a sentinel byte that no output has.
func buffersFor(t testing.TB, fill func(dtypes.DataType, []byte, bool), p *plan.Problem, srcSpecials, binSpecials bool) (src, dst []byte, bins [][]byte) {
	t.Helper()
	return kerneltest.Buffers(t, p, 0x5A,
		func(dt dtypes.DataType, b []byte) { fill(dt, b, srcSpecials) },
		func(dt dtypes.DataType, b []byte) { fill(dt, b, binSpecials) })
}
