package plan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/status"
)

// wantStatus fails unless err carries status s (nil s: no error).
func wantStatus(t *testing.T, name string, err error, s status.Status) {
	t.Helper()
	if s == 0 {
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
		}
		return
	}
	if err == nil {
		t.Errorf("%s: no error, want %v", name, s)
		return
	}
	if !errors.Is(err, s) {
		t.Errorf("%s: error %q, want status %v", name, err, s)
	}
	if !strings.HasPrefix(err.Error(), s.Error()+": plan: ") {
		t.Errorf("%s: message %q does not say where it comes from", name, err)
	}
}

func TestProblemValidate(t *testing.T) {
	big := int64(1) << 62
	edit := func(f func(p *Problem)) *Problem {
		p := plain([]int64{2, 3, 4, 5}, 2, 3)
		f(p)
		return p
	}
	scalarAdd := func(dt dtypes.DataType) PostOp {
		return PostOp{Kind: ops.Add, BinDT: dt, BinStrides: make([]int64, 4)}
	}
	tests := []struct {
		name string
		p    *Problem
		want status.Status
	}{
		{"valid", edit(func(*Problem) {}), 0},
		{"nil", nil, status.InvalidArguments},
		{"rank 13", plain(make([]int64, 13)), status.InvalidShape},
		{"rank 12", plain([]int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}, 11), 0},
		{"short src strides", edit(func(p *Problem) { p.SrcStrides = p.SrcStrides[:3] }), status.InvalidArguments},
		{"short reduce", edit(func(p *Problem) { p.Reduce = p.Reduce[:2] }), status.InvalidArguments},
		{"long dst strides", edit(func(p *Problem) { p.DstStrides = append(p.DstStrides, 1) }), status.InvalidArguments},
		{"negative dim", edit(func(p *Problem) { p.Dims[1] = -3 }), status.InvalidShape},
		{"negative src stride", edit(func(p *Problem) { p.SrcStrides[3] = -1 }), status.InvalidArguments},
		{"negative kept dst stride", edit(func(p *Problem) { p.DstStrides[0] = -1 }), status.InvalidArguments},
		{"negative reduced dst stride is ignored", edit(func(p *Problem) { p.DstStrides[2] = -1 }), 0},
		{"src s32 to bf16", edit(func(p *Problem) { p.SrcDT, p.DstDT = dtypes.S32, dtypes.BF16 }), status.InvalidDataType},
		{"src undef", edit(func(p *Problem) { p.SrcDT = dtypes.Undef }), status.InvalidDataType},
		{"f16 to bf16", edit(func(p *Problem) { p.SrcDT, p.DstDT = dtypes.F16, dtypes.BF16 }), 0},
		{"f32 to f16", edit(func(p *Problem) { p.DstDT = dtypes.F16 }), 0},
		{"dst s64", edit(func(p *Problem) { p.DstDT = dtypes.S64 }), status.InvalidDataType},
		{"src s64 to f32", edit(func(p *Problem) { p.SrcDT = dtypes.S64 }), 0}, // an exact mean
		{"src s64 to bf16", edit(func(p *Problem) { p.SrcDT, p.DstDT = dtypes.S64, dtypes.BF16 }), status.InvalidDataType},
		{"dst boolean", edit(func(p *Problem) { p.DstDT = dtypes.Boolean }), status.InvalidDataType},
		{"dst undef", edit(func(p *Problem) { p.DstDT = dtypes.Undef }), status.InvalidDataType},
		{"bf16 to f32", edit(func(p *Problem) { p.SrcDT = dtypes.BF16 }), 0},
		{"f16 to f16", edit(func(p *Problem) { p.SrcDT, p.DstDT = dtypes.F16, dtypes.F16 }), 0},
		{"unknown post-op", edit(func(p *Problem) { p.PostOps = []PostOp{{Kind: 99}} }), status.InvalidArguments},
		{"zero post-op", edit(func(p *Problem) { p.PostOps = []PostOp{{}} }), status.InvalidArguments},
		{"unary with operand", edit(func(p *Problem) {
			p.PostOps = []PostOp{{Kind: ops.ReLU, BinDT: dtypes.F32, BinStrides: make([]int64, 4)}}
		}), status.InvalidArguments},
		{"binary s8 operand", edit(func(p *Problem) { p.PostOps = []PostOp{scalarAdd(dtypes.S8)} }), 0},
		{"binary u8 operand", edit(func(p *Problem) { p.PostOps = []PostOp{scalarAdd(dtypes.U8)} }), 0},
		{"binary s32 operand", edit(func(p *Problem) { p.PostOps = []PostOp{scalarAdd(dtypes.S32)} }), 0},
		{"binary s64 operand", edit(func(p *Problem) { p.PostOps = []PostOp{scalarAdd(dtypes.S64)} }), status.InvalidDataType},
		{"binary boolean operand", edit(func(p *Problem) { p.PostOps = []PostOp{scalarAdd(dtypes.Boolean)} }), status.InvalidDataType},
		{"binary without data type", edit(func(p *Problem) { p.PostOps = []PostOp{scalarAdd(dtypes.Undef)} }), status.InvalidDataType},
		{"binary short strides", edit(func(p *Problem) {
			p.PostOps = []PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, 1}}}
		}), status.InvalidArguments},
		{"binary negative kept stride", edit(func(p *Problem) {
			p.PostOps = []PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, -1, 0, 0}}}
		}), status.InvalidArguments},
		{"binary negative reduced stride is ignored", edit(func(p *Problem) {
			p.PostOps = []PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, 1, -1, 0}}}
		}), 0},
		{"MaxBinary binary", edit(func(p *Problem) {
			for range MaxBinary {
				p.PostOps = append(p.PostOps, scalarAdd(dtypes.F32))
			}
		}), 0},
		{"one past MaxBinary binary", edit(func(p *Problem) {
			for range MaxBinary + 1 {
				p.PostOps = append(p.PostOps, scalarAdd(dtypes.F32))
			}
		}), status.Unimplemented},
		{"element count overflow", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{1 << 32, 1 << 32}, SrcStrides: []int64{0, 0}, Reduce: axes(2, 1), DstStrides: []int64{1, 0}},
			status.InvalidArguments},
		{"no outputs beside huge reduced dims", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{0, 1 << 32, 1 << 32}, SrcStrides: []int64{0, 0, 0}, Reduce: axes(3, 1, 2), DstStrides: []int64{1, 0, 0}},
			0},
		{"an empty reduction beside huge dims", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{1 << 62, 0, 4}, SrcStrides: []int64{0, 4, 1}, Reduce: axes(3, 0, 1, 2), DstStrides: []int64{0, 0, 0}},
			0},
		{"outputs overflow beside an empty reduction", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{1 << 32, 1 << 32, 0}, SrcStrides: []int64{0, 0, 1}, Reduce: axes(3, 2), DstStrides: []int64{1 << 32, 1, 0}},
			status.InvalidArguments},
		{"src span overflow", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{3}, SrcStrides: []int64{big}, Reduce: axes(1, 0), DstStrides: []int64{0}},
			status.InvalidArguments},
		{"src bytes overflow", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{2}, SrcStrides: []int64{big}, Reduce: axes(1, 0), DstStrides: []int64{0}},
			status.OutOfMemory},
		{"dst bytes overflow", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{2, 2}, SrcStrides: []int64{2, 1}, Reduce: axes(2, 1), DstStrides: []int64{big, 0}},
			status.OutOfMemory},
		{"operand bytes overflow", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{2, 2}, SrcStrides: []int64{2, 1}, Reduce: axes(2, 1), DstStrides: []int64{1, 0},
			PostOps: []PostOp{{Kind: ops.Add, BinDT: dtypes.F16, BinStrides: []int64{math.MaxInt64 / 2, 0}}}},
			status.OutOfMemory},
		{"kept dst overlap", edit(func(p *Problem) { p.DstStrides[0] = 1 }), status.InvalidArguments},
		{"kept dst stride 0", edit(func(p *Problem) { p.DstStrides[1] = 0 }), status.InvalidArguments},
		{"permuted dst", edit(func(p *Problem) { p.DstStrides[0], p.DstStrides[1] = 1, 2 }), 0},
		{"huge stride on size-1 dim is fine", &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{1, 5}, SrcStrides: []int64{math.MaxInt64, 1}, Reduce: axes(2, 1), DstStrides: []int64{math.MaxInt64, 0}},
			0},
	}
	for _, tc := range tests {
		wantStatus(t, tc.name, tc.p.Validate(), tc.want)
		if _, err := Canonicalize(tc.p); (err == nil) != (tc.want == 0) {
			t.Errorf("%s: Canonicalize error %v disagrees with Validate", tc.name, err)
		}
	}
}

func TestPlanValidate(t *testing.T) {
	base := func() *Plan {
		p := plain([]int64{4, 6, 8}, 1)
		p.PostOps = []PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{8, 0, 1}}}
		pl, err := Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	edit := func(f func(pl *Plan)) *Plan {
		pl := base()
		f(pl)
		return pl
	}
	tests := []struct {
		name string
		pl   *Plan
		want status.Status
	}{
		{"canonical", base(), 0},
		{"nil", nil, status.InvalidArguments},
		{"bad dst type", edit(func(pl *Plan) { pl.DstDT = dtypes.F64 }), status.InvalidDataType},
		{"bad src type", edit(func(pl *Plan) { pl.SrcDT = dtypes.Undef }), status.InvalidDataType},
		{"s32 mean with post-ops", edit(func(pl *Plan) { pl.SrcDT = dtypes.S32 }), status.Unimplemented},
		{"s32 mean", edit(func(pl *Plan) { pl.SrcDT = dtypes.S32; pl.PostOps = nil; stripBins(pl) }), 0},
		{"s64 mean to f64", edit(func(pl *Plan) { pl.SrcDT, pl.DstDT = dtypes.S64, dtypes.F64; pl.PostOps = nil; stripBins(pl) }), 0},
		{"s64 mean to s32", edit(func(pl *Plan) { pl.SrcDT, pl.DstDT = dtypes.S64, dtypes.S32; pl.PostOps = nil; stripBins(pl) }), status.InvalidDataType},
		{"u32 sum to f32", edit(func(pl *Plan) {
			pl.SrcDT, pl.Reduction = dtypes.U32, AlgSum.Reduction(0, 0)
			pl.PostOps = nil
			stripBins(pl)
		}), status.InvalidDataType},
		{"s32 L1", edit(func(pl *Plan) {
			pl.SrcDT, pl.DstDT, pl.Reduction = dtypes.S32, dtypes.S32, AlgNormLpSum.Reduction(1, 0)
			pl.PostOps = nil
			stripBins(pl)
		}), status.Unimplemented},
		{"boolean sum", edit(func(pl *Plan) {
			pl.SrcDT, pl.DstDT, pl.Reduction = dtypes.Boolean, dtypes.Boolean, AlgSum.Reduction(0, 0)
			pl.PostOps = nil
			stripBins(pl)
		}), status.InvalidDataType},
		{"boolean all", edit(func(pl *Plan) {
			pl.SrcDT, pl.DstDT, pl.Reduction = dtypes.Boolean, dtypes.Boolean, LogicalAnd
			pl.PostOps = nil
			stripBins(pl)
		}), 0},
		{"u8 any to u8", edit(func(pl *Plan) {
			pl.SrcDT, pl.DstDT, pl.Reduction = dtypes.U8, dtypes.U8, LogicalOr
			pl.PostOps = nil
			stripBins(pl)
		}), 0},
		{"s8 bitwise xor", edit(func(pl *Plan) {
			pl.SrcDT, pl.DstDT, pl.Reduction = dtypes.S8, dtypes.S8, Bitwise(CombineXor)
			pl.PostOps = nil
			stripBins(pl)
		}), 0},
		{"f32 bitwise and", edit(func(pl *Plan) {
			pl.Reduction = Bitwise(CombineAnd)
			pl.PostOps = nil
			stripBins(pl)
		}), status.InvalidDataType},
		{"s32 max in stages", edit(func(pl *Plan) {
			pl.SrcDT, pl.DstDT, pl.Reduction, pl.Stage = dtypes.S32, dtypes.S32, AlgMax.Reduction(0, 0), SkipTransform
			pl.PostOps = nil
			stripBins(pl)
		}), status.InvalidArguments},
		{"negative size", edit(func(pl *Plan) { pl.Outer[0].Size = -1 }), status.InvalidShape},
		{"negative inner stride", edit(func(pl *Plan) { pl.Inner.SrcStride = -1 }), status.InvalidArguments},
		{"reduced with dst stride", edit(func(pl *Plan) { pl.Reduced[0].DstStride = 1 }), status.InvalidArguments},
		{"reduced with operand stride", edit(func(pl *Plan) { pl.Reduced[0].BinStrides[0] = 1 }), status.InvalidArguments},
		{"reduced without operand strides", edit(func(pl *Plan) { pl.Reduced[0].BinStrides = nil }), 0},
		{"kept without operand strides", edit(func(pl *Plan) { pl.Outer[0].BinStrides = nil }), status.InvalidArguments},
		{"negative operand stride", edit(func(pl *Plan) { pl.Inner.BinStrides[0] = -2 }), status.InvalidArguments},
		{"post-op keeps strides", edit(func(pl *Plan) { pl.PostOps[0].BinStrides = []int64{1} }), status.InvalidArguments},
		{"negative div", edit(func(pl *Plan) { pl.Div = -1 }), status.InvalidArguments},
		{"dst written twice", edit(func(pl *Plan) { pl.Outer[0].DstStride = 4 }), status.InvalidArguments},
		{"empty loop does not hide an overflowing span", edit(func(pl *Plan) {
			pl.Reduced[0].Size = 0
			pl.Outer[0].SrcStride = math.MaxInt64 / 2
		}), status.InvalidArguments},
		{"counts are informative", edit(func(pl *Plan) { pl.N, pl.Outputs = 7, 0 }), 0},
		{"div 1 block", edit(func(pl *Plan) { pl.Div = 1; pl.Outer[0].Size = 2; pl.PostOps = nil; stripBins(pl) }), 0},
		{"too many loops", edit(func(pl *Plan) {
			for len(pl.Outer)+len(pl.Reduced)+1 <= MaxLoops {
				pl.Outer = append(pl.Outer, Loop{Size: 1, BinStrides: []int64{0}})
			}
		}), status.Unimplemented},
		{"src bytes overflow", edit(func(pl *Plan) { pl.Reduced[0].SrcStride = math.MaxInt64 / 6 }), status.OutOfMemory},
		{"src span overflow", edit(func(pl *Plan) { pl.Reduced[0].SrcStride = math.MaxInt64 / 2 }), status.InvalidArguments},
	}
	for _, tc := range tests {
		wantStatus(t, tc.name, tc.pl.Validate(), tc.want)
	}
}

// stripBins drops every binary stride of pl's loops.
func stripBins(pl *Plan) {
	for i := range pl.Outer {
		pl.Outer[i].BinStrides = nil
	}
	for i := range pl.Reduced {
		pl.Reduced[i].BinStrides = nil
	}
	pl.Inner.BinStrides = nil
}

func TestSpanElems(t *testing.T) {
	tests := []struct {
		dims, strides []int64
		want          int64
		status        status.Status
	}{
		{nil, nil, 1, 0},
		{[]int64{2, 3}, []int64{3, 1}, 6, 0},
		{[]int64{2, 3}, []int64{8, 1}, 11, 0}, // padded rows: the last row ends early
		{[]int64{2, 3}, []int64{1, 2}, 6, 0},  // column-major
		{[]int64{4}, []int64{0}, 1, 0},        // broadcast
		{[]int64{4, 0}, []int64{1 << 62, 1}, 0, 0},
		{[]int64{2}, []int64{math.MaxInt64}, 0, status.InvalidArguments},
		{[]int64{2, 2}, []int64{math.MaxInt64/2 + 1, math.MaxInt64/2 + 1}, 0, status.InvalidArguments},
		{[]int64{2, 2}, []int64{math.MaxInt64 / 2, math.MaxInt64 / 2}, math.MaxInt64, 0},
		{[]int64{2}, []int64{1, 1}, 0, status.InvalidArguments},
		{[]int64{-1}, []int64{1}, 0, status.InvalidShape},
		{[]int64{2}, []int64{-1}, 0, status.InvalidArguments},
	}
	for _, tc := range tests {
		got, err := SpanElems(tc.dims, tc.strides)
		wantStatus(t, "SpanElems", err, tc.status)
		if tc.status == 0 && got != tc.want {
			t.Errorf("SpanElems(%v, %v) = %d, want %d", tc.dims, tc.strides, got, tc.want)
		}
	}
}

func TestProblemBytes(t *testing.T) {
	// bf16 4x6x8 reduced over axis 1 into f32; an f16 per-row operand
	// (stride 1 over the first dim) and a bf16 full one laid out 8x4.
	p := plain([]int64{4, 6, 8}, 1)
	p.SrcDT = dtypes.BF16
	p.PostOps = []PostOp{
		{Kind: ops.Add, BinDT: dtypes.F16, BinStrides: []int64{1, 0, 0}},
		{Kind: ops.Exp},
		{Kind: ops.Multiply, BinDT: dtypes.BF16, BinStrides: []int64{1, 99, 4}},
	}
	check := func(name string, got int64, err error, want int64) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", name, got, err, want)
		}
	}
	n, err := p.SrcBytes()
	check("SrcBytes", n, err, 4*6*8*2)
	n, err = p.DstBytes()
	check("DstBytes", n, err, 4*8*4)
	n, err = p.BinBytes(0)
	check("BinBytes(0)", n, err, 4*2)
	n, err = p.BinBytes(1)
	check("BinBytes(1)", n, err, 32*2)
	_, err = p.BinBytes(2)
	wantStatus(t, "BinBytes(2)", err, status.InvalidArguments)
	_, err = p.BinBytes(-1)
	wantStatus(t, "BinBytes(-1)", err, status.InvalidArguments)
	if p.BinaryCount() != 2 {
		t.Errorf("BinaryCount = %d, want 2", p.BinaryCount())
	}

	pl, err := Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		a, _ := p.BinBytes(i)
		b, err := pl.BinBytes(i)
		if err != nil || a != b {
			t.Errorf("plan BinBytes(%d) = %d, %v; problem %d", i, b, err, a)
		}
	}
	_, err = (*Problem)(nil).SrcBytes()
	wantStatus(t, "nil SrcBytes", err, status.InvalidArguments)
	_, err = (*Plan)(nil).DstBytes()
	wantStatus(t, "nil plan DstBytes", err, status.InvalidArguments)
}

func TestSelfOverlaps(t *testing.T) {
	many := make([]int64, MaxLoops+1)
	manyStrides := make([]int64, MaxLoops+1)
	for i := range many {
		many[i], manyStrides[i] = 2, int64(1)<<i
	}
	cases := []struct {
		name          string
		dims, strides []int64
		want          bool
	}{
		{"dense", []int64{2, 3, 4}, []int64{12, 4, 1}, false},
		{"permuted", []int64{2, 3, 4}, []int64{1, 8, 2}, false},
		{"padded", []int64{2, 3}, []int64{10, 3}, false},
		{"size-1 dims ignored", []int64{1, 5, 1}, []int64{0, 1, 0}, false},
		{"stride 0", []int64{2, 3}, []int64{0, 1}, true},
		{"rows overlap", []int64{3, 4}, []int64{2, 1}, true},
		{"interleaved, refused", []int64{3, 2}, []int64{2, 3}, true},
		{"empty", []int64{0, 3}, []int64{0, 0}, false},
		{"lengths differ", []int64{2, 3}, []int64{1}, true},
		{"more dims than loops", many, manyStrides, true},
		{"extent overflows", []int64{1 << 40, 1 << 40}, []int64{1, 1 << 40}, false},
	}
	for _, c := range cases {
		if got := SelfOverlaps(c.dims, c.strides); got != c.want {
			t.Errorf("%s: SelfOverlaps(%v, %v) = %v, want %v", c.name, c.dims, c.strides, got, c.want)
		}
	}
}

// The overflow refusals name the count that overflowed: every element's,
// or beside a zero dim only the outputs'.
func TestCountOverflowMessages(t *testing.T) {
	tests := []struct {
		p    *Problem
		want string
	}{
		{&Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{1 << 32, 1 << 32},
			SrcStrides: []int64{0, 0}, Reduce: axes(2, 1), DstStrides: []int64{1, 0}},
			"element count of dims [4294967296 4294967296] overflows"},
		{&Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{1 << 32, 1 << 32, 0},
			SrcStrides: []int64{0, 0, 1}, Reduce: axes(3, 2), DstStrides: []int64{1 << 32, 1, 0}},
			"output count (the kept dims' product) of dims [4294967296 4294967296 0] overflows"},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("dims %v: error %v, want it to say %q", tc.p.Dims, err, tc.want)
		}
	}
}

// A Pow post-op with a beta outside ops.PowBetas is refused, and the error
// says which betas are taken.
func TestPowBetaRefused(t *testing.T) {
	for _, beta := range []float32{1.5, -3, 4, 0.25, float32(math.Inf(1)), float32(math.NaN())} {
		p := &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{4, 8}, SrcStrides: []int64{8, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: []PostOp{{Kind: ops.Pow, Beta: beta}}}
		err := p.Validate()
		if !errors.Is(err, status.Unimplemented) || err == nil || !strings.Contains(err.Error(), ops.PowBetasText) {
			t.Errorf("Pow beta %v: Validate() = %v, want Unimplemented naming the betas taken", beta, err)
		}
	}
	for _, beta := range ops.PowBetas {
		p := &Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{4, 8}, SrcStrides: []int64{8, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: []PostOp{{Kind: ops.Pow, Beta: beta}}}
		if err := p.Validate(); err != nil {
			t.Errorf("Pow beta %v: Validate() = %v", beta, err)
		}
	}
}

// TestSpanOverflowNamesTensor: a span past int64 names the tensor whose
// strides overflow, for a reduction and an index reduction alike.
func TestSpanOverflowNamesTensor(t *testing.T) {
	huge := int64(1) << 62
	p := plain([]int64{4, 6, 8}, 1)
	p.DstStrides = []int64{huge, 0, 1}
	if _, err := p.DstBytes(); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "plan: dst: span") {
		t.Errorf("DstBytes: %v; want InvalidArguments naming dst", err)
	}
	p = plain([]int64{4, 6, 8}, 1)
	p.SrcStrides = []int64{huge, 8, 1}
	if _, err := p.SrcBytes(); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "plan: src: span") {
		t.Errorf("SrcBytes: %v; want InvalidArguments naming src", err)
	}
	p = plain([]int64{4, 6, 8}, 1)
	p.PostOps = []PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{huge, 0, 1}}}
	if _, err := p.BinBytes(0); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "plan: binary operand: span") {
		t.Errorf("BinBytes: %v; want InvalidArguments naming the binary operand", err)
	}
	a := &ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: []int64{3, 4}, SrcStrides: []int64{4, 1}, DstStrides: []int64{huge, 0}, Axis: 1}
	if _, err := CanonicalizeArg(a); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "plan: dst: span") {
		t.Errorf("CanonicalizeArg: %v; want InvalidArguments naming dst", err)
	}
	a.DstStrides, a.SrcStrides = []int64{1, 0}, []int64{huge, 1}
	if _, err := CanonicalizeArg(a); !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "plan: src: span") {
		t.Errorf("CanonicalizeArg: %v; want InvalidArguments naming src", err)
	}
}
