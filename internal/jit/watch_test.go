package jit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestFromMemoryMaxMinSpecials runs f32 max and min through Compile and
// Run with every plan marked FromMemory (the size bound lifted), so that
// on a paced core (AMD Zen) AVX-512 kernels, row by row aside, check their src for NaN
// by a watch sum that sends a call whose sum is NaN to the exact code
// (internal/isa/amd64/speculate.go). The data is built to fool a sum: a NaN (quiet or
// signalling, either sign) anywhere, +Inf and -Inf together, sums that
// overflow and then meet -Inf, signed zeros. Small call budgets cut the
// problems into many calls (blocks, tiles, two stages) and row by row
// schedules are run too, so a NaN lands in one call of several, or in
// none of a thread's. 1, 2 and 3 threads must write the same bytes, and
// those must equal the interpreter's (NaN: any NaN).
func TestFromMemoryMaxMinSpecials(t *testing.T) {
	withSizeBound(t, &fromMemoryBytes, 0)
	t.Logf("paced core: %v", cpuFeatures().zen)
	forEachISA(t, func(t *testing.T) {
		if EffectiveISA() == None {
			t.Skip("the interpreter is the reference here")
		}
		for _, rbr := range []bool{false, true} {
			if rbr {
				withSizeBound(t, &rowByRowMinBytes, 0)
			}
			testFromMemorySpecials(t, rbr)
		}
	})
}

func testFromMemorySpecials(t *testing.T, rowByRow bool) {
	r := rand.New(rand.NewPCG(61, 62))
	type shape struct {
		dims   []int64
		reduce []bool
	}
	shapes := []shape{
		{[]int64{1, 300001}, []bool{false, true}},
		{[]int64{7, 4099}, []bool{false, true}},
		{[]int64{3, 5, 70}, []bool{false, true, true}},
		{[]int64{4, 9, 33}, []bool{false, true, false}}, // over the middle axis: row by row
		{[]int64{2, 64, 40}, []bool{false, true, false}},
		{[]int64{2, 300, 100}, []bool{false, true, false}}, // row by row when the bound is lifted
		{[]int64{260, 517}, []bool{true, false}},
	}
	for n := int64(1); n <= 70; n += 5 {
		shapes = append(shapes, shape{[]int64{5, n}, []bool{false, true}})
	}
	maxF := float32(math.MaxFloat32)
	nans := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0xffffffff}
	fromMemory := 0
	splits := map[string]int{}
	for si, sh := range shapes {
		for _, alg := range []plan.Alg{plan.AlgMax, plan.AlgMin} {
			s := spec{dims: sh.dims, reduce: sh.reduce, sdt: dtypes.F32, ddt: floatTypes[si%3]}
			if si%4 == 1 {
				s.post = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}, {Kind: ops.ReLU}}
			}
			c := s.build(t, r)
			c.p.Reduction = alg.Reduction(0, 0)
			for _, budget := range []int64{1 << 20, 256} {
				withBudget(t, budget)
				k := c.compile(t)
				splits[k.dec.split]++
				for _, h := range k.dec.hints {
					if h.FromMemory {
						fromMemory++
					}
				}
				n := int64(len(c.src) / 4)
				for pat := range 8 {
					for i := range n {
						v := []float32{maxF, -maxF, 1, -2, 0, float32(math.Copysign(0, -1)), 1e-45, -1e-40}[r.IntN(8)]
						if pat == 4 {
							v = maxF // every sum overflows to +Inf
						}
						dtypes.StoreF32(dtypes.F32, c.src, i, v)
					}
					at := []int64{0, n - 1, r.Int64N(n), r.Int64N(n), -1, -1, -1, r.Int64N(n)}[pat]
					switch pat {
					case 5: // no NaN, but both infinities: the watch sum is NaN
						dtypes.StoreF32(dtypes.F32, c.src, r.Int64N(n), float32(math.Inf(1)))
						dtypes.StoreF32(dtypes.F32, c.src, r.Int64N(n), float32(math.Inf(-1)))
					case 4, 6: // +Inf (overflowed or stored) meets -Inf
						dtypes.StoreF32(dtypes.F32, c.src, r.Int64N(n), float32(math.Inf(-1)))
					}
					if at >= 0 {
						binary.LittleEndian.PutUint32(c.src[4*at:], nans[r.IntN(len(nans))])
					}
					what := fmt.Sprintf("%v %v over %v f32->%v post %d, budget %d, row by row %v, pattern %d (NaN at %d), split %s",
						alg, sh.dims, sh.reduce, s.ddt, len(s.post), budget, rowByRow, pat, at, k.dec.split)
					want := c.newDst()
					if err := interp.RunProblem(c.p, c.src, want, c.bins); err != nil {
						t.Fatalf("%s: interp: %v", what, err)
					}
					var first []byte
					for _, th := range []int{1, 2, 3} {
						withThreads(t, th)
						dst := c.newDst()
						if err := k.Run(c.src, dst, c.bins); err != nil {
							t.Fatalf("%s, %d threads: %v", what, th, err)
						}
						if first == nil {
							first = dst
							if d := diffNaNAny(s.ddt, dst, want); d != "" {
								t.Fatalf("%s: against the interpreter: %s", what, d)
							}
						} else if !bytes.Equal(dst, first) {
							t.Fatalf("%s: %d threads differ from 1", what, th)
						}
					}
				}
			}
		}
	}
	t.Logf("row by row %v: schedules %v", rowByRow, splits)
	if fromMemory == 0 {
		t.Fatal("no plan was marked FromMemory")
	}
}

// diffNaNAny describes the first element of dt where got and want differ
// in any bit, unless both are NaN.
func diffNaNAny(dt dtypes.DataType, got, want []byte) string {
	sz := int64(esz(dt))
	for i := int64(0); i < int64(len(got))/sz; i++ {
		g, w := oracle.Get(dt, got, i), oracle.Get(dt, want, i)
		if math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		if !bytes.Equal(got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz]) {
			return fmt.Sprintf("dst[%d] = %v (% x), want %v (% x)", i, g, got[i*sz:(i+1)*sz], w, want[i*sz:(i+1)*sz])
		}
	}
	return ""
}
