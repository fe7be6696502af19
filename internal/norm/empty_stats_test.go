package norm

import (
	"fmt"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// TestEmptyRowStatsSpanOverflow: rows of no element still have
// statistics, whose span New computes to size their buffers; a span past
// 2^63 elements must be an InvalidShape error, as it is for rows with
// elements: a span summed unchecked wraps, and Run would then panic (a
// mean stride of 3<<61) or write a mean at offset 4*2^62 = 2^64, which
// wraps to 0 (a stride of 1<<62), over the first.
func TestEmptyRowStatsSpanOverflow(t *testing.T) {
	f32 := dtypes.F32
	for _, s := range []int64{1 << 62, 3 << 61} {
		for _, kind := range []Kind{LayerNorm, Softmax} {
			t.Run(fmt.Sprintf("%v/stride=%d", kind, s), func(t *testing.T) {
				p := &Problem{Kind: kind, Dims: []int64{4, 0}, Axis: 1,
					Src: Operand{DT: f32, Strides: []int64{0, 1}}, Dst: Operand{DT: f32, Strides: []int64{0, 1}}}
				if kind == LayerNorm {
					p.Mean = Operand{DT: f32, Strides: []int64{s}}
					p.Var = Operand{DT: f32, Strides: []int64{1}}
				} else {
					p.Stats = Operand{DT: f32, Strides: []int64{s, 1}}
				}
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				e, err := New(p)
				if err != nil {
					return // refused: what the test wants
				}
				b := make([]byte, 16)
				for i := range b {
					b[i] = 0xAB
				}
				err = e.Run(Buffers{Mean: b, Var: make([]byte, 16), Stats: b}, 1)
				t.Errorf("stats stride %d over 4 rows of no element: New accepted it (span %v) and Run returned %v, wrote % x; want New to refuse it",
					s, e.need, err, b)
			})
		}
	}
}
