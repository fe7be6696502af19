package amd64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// maxMinSpecials are the f32 values whose order max and min must get
// right: quiet and signalling NaNs of both signs, signed zeros and
// infinities, denormals, and ordinary neighbours of each.
var maxMinSpecials = []uint32{
	0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, // NaNs
	0x00000000, 0x80000000, // ±0
	0x7F800000, 0xFF800000, // ±Inf
	0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, // denormals
	0x00800000, 0x80800000, // smallest normals
	0x3F800000, 0xBF800000, 0x3F800001, // ±1, 1+ulp
	0x7F7FFFFF, 0xFF7FFFFF, // ±MaxFloat32
}

// TestMaxMinAllPairs combines every ordered pair of maxMinSpecials with
// max and min, on every ISA, in every way a kernel combines: two rows of
// one column (vertical, in the loop), the pair in one row at every pair of
// positions of a short row and a row longer than two vectors (within a
// lane, across lanes in the horizontal combine, in the masked tail), and
// the Maximum and Minimum post-ops (the reduction's value on the left).
// Each output is compared with plan.Binary bit for bit (any NaN matches
// any NaN).
func TestMaxMinAllPairs(t *testing.T) {
	vals := make([]float32, len(maxMinSpecials))
	for i, b := range maxMinSpecials {
		vals[i] = math.Float32frombits(b)
	}
	nv := int64(len(vals))
	np := nv * nv
	pair := func(i int64) (a, b float32) { return vals[i/nv], vals[i%nv] }
	for _, isa := range isas(t) {
		for _, k := range []ops.Kind{ops.Maximum, ops.Minimum} {
			alg, id := plan.AlgMax, float32(math.Inf(-1))
			if k == ops.Minimum {
				alg, id = plan.AlgMin, float32(math.Inf(1))
			}
			red := alg.Reduction(0, 0)
			// Columns: [2, np] over axis 0.
			p := &plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2, np},
				SrcStrides: []int64{np, 1}, Reduce: []bool{true, false}, DstStrides: []int64{0, 1}}
			src := make([]float32, 2*np)
			for i := int64(0); i < np; i++ {
				src[i], src[np+i] = pair(i)
			}
			checkPairs(t, isa, k, p, src, nil, pair)
			// Rows: [np, n] over axis 1, the pair at positions (x, y),
			// the identity elsewhere.
			for _, n := range []int64{2, 5, 37} {
				for _, xy := range [][2]int64{{0, 1}, {1, 0}, {0, n - 1}, {n - 1, 0}, {n / 2, n - 1}, {n - 2, n / 3}} {
					if xy[0] == xy[1] {
						continue
					}
					p := &plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{np, n},
						SrcStrides: []int64{n, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
					src := make([]float32, np*n)
					for i := range src {
						src[i] = id
					}
					for i := int64(0); i < np; i++ {
						src[i*n+xy[0]], src[i*n+xy[1]] = pair(i)
					}
					checkPairs(t, isa, k, p, src, nil, pair)
				}
			}
			// Post-op: a one-element max or min (the first of the
			// pair) combined with the operand (the second).
			p = &plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{np, 1},
				SrcStrides: []int64{1, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0},
				PostOps: []plan.PostOp{{Kind: k, BinDT: dtypes.F32, BinStrides: []int64{1, 0}}}}
			src = make([]float32, np)
			bin := make([]float32, np)
			for i := int64(0); i < np; i++ {
				src[i], bin[i] = pair(i)
			}
			checkPairs(t, isa, k, p, src, bin, pair)
		}
	}
}

// checkPairs runs p on src (and the binary operand bin, if any) and
// checks output i against plan.Binary(k, pair(i)).
func checkPairs(t *testing.T, isa isaCase, k ops.Kind, p *plan.Problem, src, bin []float32, pair func(int64) (a, b float32)) {
	t.Helper()
	enc := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, f := range v {
			dtypes.StoreF32(dtypes.F32, b, int64(i), f)
		}
		return b
	}
	var bins [][]byte
	if bin != nil {
		bins = [][]byte{enc(bin)}
	}
	db, err := p.DstBytes()
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, db)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	kn := compile(t, pl, isa.o)
	defer kn.Release()
	kn.RunBlocks(pl, enc(src), dst, bins, 0)
	for i := int64(0); i < db/4; i++ {
		a, b := pair(i)
		want := plan.Binary(k, a, b)
		got := dtypes.LoadF32(dtypes.F32, dst, i)
		if got != got && want != want {
			continue
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("%s %v of (%#08x, %#08x), dims %v: got %#08x, want %#08x", isa.name, k,
				math.Float32bits(a), math.Float32bits(b), p.Dims, math.Float32bits(got), math.Float32bits(want))
		}
	}
}
