package plan

import (
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/status"
)

// MaxLoops bounds the loops of one Plan (Outer, Reduced and Inner
// together). A canonical plan has at most MaxRank; the runtime may split
// loops of a canonical plan into blocks, hence the headroom. Runners size
// their index arrays by it.
const MaxLoops = 2 * MaxRank

// Validate checks that p describes a computation gdnn can run: rank at
// most MaxRank, one stride and one reduce flag per dim, no negative sizes
// or strides, src f32/bf16/f16 with dst equal to src or f32, valid
// post-ops (binary ones with a float operand, one stride per dim, at most
// MaxBinary of them) and tensor sizes whose byte counts fit in int64.
func (p *Problem) Validate() error {
	if p == nil {
		return status.Errorf(status.InvalidArguments, "plan: nil problem")
	}
	rank := len(p.Dims)
	if rank > MaxRank {
		return status.Errorf(status.InvalidShape, "plan: rank %d exceeds the maximum %d", rank, MaxRank)
	}
	if len(p.SrcStrides) != rank || len(p.Reduce) != rank || len(p.DstStrides) != rank {
		return status.Errorf(status.InvalidArguments,
			"plan: rank %d but %d src strides, %d reduce flags, %d dst strides",
			rank, len(p.SrcStrides), len(p.Reduce), len(p.DstStrides))
	}
	for i, d := range p.Dims {
		if d < 0 {
			return status.Errorf(status.InvalidShape, "plan: dim %d has negative size %d", i, d)
		}
		if p.SrcStrides[i] < 0 {
			return status.Errorf(status.InvalidArguments, "plan: src stride of dim %d is negative (%d)", i, p.SrcStrides[i])
		}
		if !p.Reduce[i] && p.DstStrides[i] < 0 {
			return status.Errorf(status.InvalidArguments, "plan: dst stride of dim %d is negative (%d)", i, p.DstStrides[i])
		}
	}
	if err := checkDataTypes(p.SrcDT, p.DstDT, p.Reduction, len(p.PostOps), 0); err != nil {
		return err
	}
	if err := p.Reduction.Validate(); err != nil {
		return err
	}
	if p.Combine == CombineFirst && slices.Contains(p.Reduce, true) {
		return status.Errorf(status.InvalidArguments, "plan: a copy reduces no dim")
	}
	if err := checkWideOperands(p.SrcDT, p.PostOps); err != nil {
		return err
	}
	if err := checkPostOps(p.PostOps, p.Reduce, true); err != nil {
		return err
	}
	kept, keptStrides := make([]int64, rank), make([]int64, rank)
	for i, d := range p.Dims {
		kept[i] = 1
		if !p.Reduce[i] {
			kept[i], keptStrides[i] = d, p.DstStrides[i]
		}
	}
	if SelfOverlaps(kept, keptStrides) {
		// In dst's terms: its dims (the kept ones) and their strides.
		var dd, ds []int64
		for i, d := range p.Dims {
			if !p.Reduce[i] {
				dd, ds = append(dd, d), append(ds, p.DstStrides[i])
			}
		}
		return status.Errorf(status.InvalidArguments, "plan: dst strides %v over dst dims %v %s", ds, dd, NestRule)
	}
	// The element count bounds every product of dims the runners use
	// (elements per output, outputs) and must fit. With a zero dim there
	// are no elements; an empty reduction still writes its outputs, whose
	// count must fit.
	counted, what := func(int) bool { return true }, "element count"
	if slices.Contains(p.Dims, 0) {
		counted, what = func(i int) bool { return !p.Reduce[i] }, "output count (the kept dims' product)"
	}
	if _, ok := dimsProduct(p.Dims, counted); !ok {
		return status.Errorf(status.InvalidArguments, "plan: %s of dims %v overflows int64", what, p.Dims)
	}
	if _, err := p.SrcBytes(); err != nil {
		return err
	}
	if _, err := p.DstBytes(); err != nil {
		return err
	}
	for i := range p.BinaryCount() {
		if _, err := p.BinBytes(i); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks that pl can be run: the data types and post-ops of a
// valid Problem (binary strides living in the loops), at most MaxLoops
// loops, no negative sizes, strides, N, Outputs or Div, one binary stride
// per binary post-op in every kept loop, zero dst and binary strides in
// reduced loops, tensor spans whose byte counts fit in int64, and kept
// loops that never write one dst element twice. Runners use only the
// loops and Div; N and Outputs are informative (jit.Compile recomputes
// them, see SetCounts).
func (pl *Plan) Validate() error {
	if pl == nil {
		return status.Errorf(status.InvalidArguments, "plan: nil plan")
	}
	if err := checkDataTypes(pl.SrcDT, pl.DstDT, pl.Reduction, len(pl.PostOps), pl.Stage); err != nil {
		return err
	}
	if err := pl.checkReduction(); err != nil {
		return err
	}
	if err := checkWideOperands(pl.SrcDT, pl.PostOps); err != nil {
		return err
	}
	if err := checkPostOps(pl.PostOps, nil, false); err != nil {
		return err
	}
	nb := pl.BinaryCount()
	loops := len(pl.Outer) + len(pl.Reduced)
	if pl.HasInner {
		loops++
	}
	if loops > MaxLoops {
		return status.Errorf(status.Unimplemented, "plan: %d loops exceed the maximum %d", loops, MaxLoops)
	}
	if pl.N < 0 || pl.Outputs < 0 || pl.Div < 0 {
		return status.Errorf(status.InvalidArguments, "plan: negative count (N %d, Outputs %d, Div %d)", pl.N, pl.Outputs, pl.Div)
	}
	for i := range pl.Outer {
		if err := checkLoop("outer", i, &pl.Outer[i], nb, false); err != nil {
			return err
		}
	}
	if pl.HasInner {
		if err := checkLoop("inner", 0, &pl.Inner, nb, false); err != nil {
			return err
		}
	}
	for i := range pl.Reduced {
		if err := checkLoop("reduced", i, &pl.Reduced[i], nb, true); err != nil {
			return err
		}
	}
	if _, err := pl.SrcBytes(); err != nil {
		return err
	}
	if _, err := pl.DstBytes(); err != nil {
		return err
	}
	// Stack arrays (the loop count is bounded above): the interpreter
	// validates its plan on every run, which then allocates nothing.
	var sizeBuf, strideBuf [MaxLoops]int64
	sizes, strides := sizeBuf[:0], strideBuf[:0]
	for _, l := range pl.Outer {
		sizes, strides = append(sizes, l.Size), append(strides, l.DstStride)
	}
	if pl.HasInner {
		sizes, strides = append(sizes, pl.Inner.Size), append(strides, pl.Inner.DstStride)
	}
	if SelfOverlaps(sizes, strides) {
		return status.Errorf(status.InvalidArguments, "plan: kept loops write some dst elements twice in plan %v", pl)
	}
	for i := range nb {
		if _, err := pl.BinBytes(i); err != nil {
			return err
		}
	}
	return nil
}

// keptLoops returns pl's Outer loops and its Inner loop, if any.
func (pl *Plan) keptLoops() []Loop {
	kept := pl.Outer
	if pl.HasInner {
		kept = append(kept[:len(kept):len(kept)], pl.Inner)
	}
	return kept
}

// SetCounts sets Outputs to the product of pl's kept loop sizes and N to
// the product of its reduced ones (0 when there are no outputs, as in a
// canonical plan), or fails if either overflows int64.
func (pl *Plan) SetCounts() error {
	product := func(what string, loops []Loop) (int64, error) {
		n := int64(1)
		for _, l := range loops {
			var ok bool
			if n, ok = mulSize(n, l.Size); !ok {
				return 0, status.Errorf(status.InvalidArguments, "plan: the product of the %s loop sizes overflows int64 in plan %v", what, pl)
			}
		}
		return n, nil
	}
	n, err := product("reduced", pl.Reduced)
	if err != nil {
		return err
	}
	outs, err := product("kept", pl.keptLoops())
	if err != nil {
		return err
	}
	if outs == 0 {
		n = 0
	}
	pl.N, pl.Outputs = n, outs
	return nil
}

// NestRule says, after a tensor's strides, why SelfOverlaps refused them.
const NestRule = "do not nest (ordered by stride, each dim's stride must be at least the extent, size times stride, of the smaller ones), " +
	"so elements may overlap"

// SelfOverlaps reports whether a tensor of dims and (non-negative)
// element strides may address one element from two indices. It requires
// a nested layout: the dims larger than 1, by increasing stride, each
// with a stride of at least the extent (size times stride) of the one
// before it. Interleaved layouts that happen not to overlap are refused
// as well, and so are mismatched lengths and more than MaxLoops dims
// larger than 1 (no valid tensor has them). An empty tensor does not
// overlap.
func SelfOverlaps(dims, strides []int64) bool {
	if len(strides) != len(dims) {
		return true
	}
	if slices.Contains(dims, 0) {
		return false
	}
	type dimStride struct{ d, s int64 }
	var v [MaxLoops]dimStride
	n := 0
	for i, d := range dims {
		if d > 1 {
			if n == len(v) {
				return true
			}
			v[n] = dimStride{d, strides[i]}
			n++
		}
	}
	for i := 1; i < n; i++ { // insertion sort: rank is small
		for k := i; k > 0 && v[k].s < v[k-1].s; k-- {
			v[k], v[k-1] = v[k-1], v[k]
		}
	}
	need := int64(1)
	for _, e := range v[:n] {
		if e.s < need {
			return true
		}
		need = MulSat(e.s, e.d)
	}
	return false
}

// checkLoop checks one loop of a plan.
func checkLoop(what string, i int, l *Loop, nb int, reduced bool) error {
	if l.Size < 0 {
		return status.Errorf(status.InvalidShape, "plan: %s loop %d has negative size %d", what, i, l.Size)
	}
	if l.SrcStride < 0 || l.DstStride < 0 {
		return status.Errorf(status.InvalidArguments, "plan: %s loop %d has a negative stride (src %d, dst %d)",
			what, i, l.SrcStride, l.DstStride)
	}
	if reduced {
		if l.DstStride != 0 {
			return status.Errorf(status.InvalidArguments, "plan: reduced loop %d has dst stride %d, want 0", i, l.DstStride)
		}
		if len(l.BinStrides) != 0 && len(l.BinStrides) != nb {
			return status.Errorf(status.InvalidArguments, "plan: reduced loop %d has %d binary strides for %d binary post-ops",
				i, len(l.BinStrides), nb)
		}
		for j, s := range l.BinStrides {
			if s != 0 {
				return status.Errorf(status.InvalidArguments, "plan: reduced loop %d has binary stride %d = %d, want 0", i, j, s)
			}
		}
		return nil
	}
	if len(l.BinStrides) != nb {
		return status.Errorf(status.InvalidArguments, "plan: %s loop %d has %d binary strides for %d binary post-ops",
			what, i, len(l.BinStrides), nb)
	}
	for j, s := range l.BinStrides {
		if s < 0 {
			return status.Errorf(status.InvalidArguments, "plan: %s loop %d has negative binary stride %d (%d)", what, i, j, s)
		}
	}
	return nil
}

// checkDataTypes enforces src in {f32, bf16, f16, s8, u8, f64} and dst
// in {f32, bf16, f16, s8, u8, s32, f64}, an f64 src going to f64 or f32
// and an f64 dst coming from an f64 src (f64.go), or for an exact
// reduction (IsExact) what checkExact says; posts is the number of
// post-ops and stage the plan's.
func checkDataTypes(src, dst dtypes.DataType, r Reduction, posts int, stage Stage) error {
	if IsExact(src, r) {
		return checkExact(src, dst, r, posts, stage)
	}
	if r.Transform == TransformNonzero || r.IsBitwise() {
		return status.Errorf(status.InvalidDataType, "plan: %v reduces integer or boolean data, not %v", r, src)
	}
	if !IsSrcType(src) {
		return status.Errorf(status.InvalidDataType, "plan: src data type %v is not f32, bf16, f16, s8, u8 or f64", src)
	}
	if (IsWide(src) || IsWide(dst)) && !WideDst(src, dst) {
		return status.Errorf(status.InvalidDataType, "plan: src data type %v with dst data type %v: an f64 src goes to f64 or f32, and an f64 dst comes from an f64 src", src, dst)
	}
	// Any dst: the graph and the driver check which pairs a user may ask
	// for, and the runtime's second stage of a split reduction turns f32
	// partial results into the user's dst.
	if !IsDstType(dst) {
		return status.Errorf(status.InvalidDataType, "plan: dst data type %v is not f32, bf16, f16, s8, u8, s32 or f64", dst)
	}
	return nil
}

// IsSrcType reports whether plans read src elements of type t: the float
// types, the 8-bit integers and f64.
func IsSrcType(t dtypes.DataType) bool { return t.IsFloat() || t.IsInt8() || IsWide(t) }

// IsDstType reports whether plans write dst elements of type t: the float
// types, the integers s8, u8 and s32 (rounded to nearest even and
// saturated, see dtypes.F32ToS8), and f64.
func IsDstType(t dtypes.DataType) bool { return t.IsFloat() || t.IsInt() || IsWide(t) }

// IsOperandType reports whether plans read binary operands of type t:
// the types they write (an operand may be the dst itself, oneDNN's sum
// post-op on an integer dst), widened to f32 as oneDNN's binary post-ops
// read theirs.
func IsOperandType(t dtypes.DataType) bool { return IsDstType(t) }

// checkWideOperands refuses an f64 binary operand beside a src that is
// not f64: its post-ops compute in f32 and would round it.
func checkWideOperands(src dtypes.DataType, postOps []PostOp) error {
	for i, op := range postOps {
		if op.Kind.IsBinary() && IsWide(op.BinDT) && !IsWide(src) {
			return status.Errorf(status.InvalidDataType, "plan: post-op %d (%v) reads a %v operand, which needs an f64 src (src %v)", i, op.Kind, op.BinDT, src)
		}
	}
	return nil
}

// checkPostOps checks kinds, binary operand types and, for a Problem
// (withStrides), one binary stride per dim, non-negative where the dim is
// kept (reduce holds the Problem's flags; strides of reduced dims are
// ignored); for a Plan the binary strides live in the loops, so the ops
// must carry none.
func checkPostOps(postOps []PostOp, reduce []bool, withStrides bool) error {
	rank := len(reduce)
	nb := 0
	for i, op := range postOps {
		if !op.Kind.Valid() {
			return status.Errorf(status.InvalidArguments, "plan: post-op %d has unknown kind %d", i, int(op.Kind))
		}
		if op.Kind == ops.Pow && !ops.IsPowBeta(op.Beta) {
			return status.Errorf(status.Unimplemented, "plan: post-op %d is Pow with beta %v; %s", i, op.Beta, ops.PowBetasText)
		}
		if !op.Kind.IsBinary() {
			if op.BinDT != dtypes.Undef || len(op.BinStrides) != 0 {
				return status.Errorf(status.InvalidArguments,
					"plan: post-op %d (%v) is unary but has a binary operand (data type %v, %d strides)",
					i, op.Kind, op.BinDT, len(op.BinStrides))
			}
			continue
		}
		nb++
		if nb > MaxBinary {
			return status.Errorf(status.Unimplemented, "plan: post-op %d (%v) is binary post-op %d, at most %d are supported",
				i, op.Kind, nb, MaxBinary)
		}
		if !IsOperandType(op.BinDT) {
			return status.Errorf(status.InvalidDataType, "plan: post-op %d (%v) operand data type %v is not f32, bf16, f16, s8, u8, s32 or f64",
				i, op.Kind, op.BinDT)
		}
		if !withStrides {
			if len(op.BinStrides) != 0 {
				return status.Errorf(status.InvalidArguments, "plan: post-op %d (%v) of a plan carries %d strides; they belong in the loops",
					i, op.Kind, len(op.BinStrides))
			}
			continue
		}
		if len(op.BinStrides) != rank {
			return status.Errorf(status.InvalidArguments, "plan: post-op %d (%v) has %d operand strides for rank %d",
				i, op.Kind, len(op.BinStrides), rank)
		}
		for j, s := range op.BinStrides {
			if s < 0 && !reduce[j] {
				return status.Errorf(status.InvalidArguments, "plan: post-op %d (%v) operand stride of dim %d is negative (%d)",
					i, op.Kind, j, s)
			}
		}
	}
	return nil
}

// checkReduction checks the alg and the stage: a copy has no reduced
// loop, and a plan whose dst takes partials writes them as f32 with no
// post-ops.
func (pl *Plan) checkReduction() error {
	if err := pl.Reduction.Validate(); err != nil {
		return err
	}
	if pl.Stage&^(SkipTransform|SkipFinalize|Unshifted) != 0 {
		return status.Errorf(status.InvalidArguments, "plan: unknown stage flags %#x", int(pl.Stage))
	}
	if pl.Stage&Unshifted != 0 && !pl.IsLogSumExp() {
		return status.Errorf(status.InvalidArguments, "plan: only a log-sum-exp is unshifted (%v)", pl.Reduction)
	}
	if pl.Stage&Unshifted != 0 && (pl.DstDT != dtypes.F32 || len(pl.PostOps) > 0) {
		return status.Errorf(status.InvalidArguments, "plan: an unshifted log-sum-exp writes f32 results with no post-ops (dst %v, %d post-ops), which the runtime checks", pl.DstDT, len(pl.PostOps))
	}
	if pl.ShiftedLogSumExp() && pl.Stage != 0 {
		return status.Errorf(status.InvalidArguments, "plan: a log-sum-exp is not split into stages unless unshifted")
	}
	if pl.Combine == CombineFirst && len(pl.Reduced) > 0 {
		return status.Errorf(status.InvalidArguments, "plan: a copy has %d reduced loops, want none", len(pl.Reduced))
	}
	if pl.Stage&Unshifted != 0 && IsWide(pl.SrcDT) {
		return status.Errorf(status.InvalidArguments, "plan: a log-sum-exp over %v is computed shifted, never unshifted", pl.SrcDT)
	}
	if pt := PartialType(pl.SrcDT); pl.Stage&SkipFinalize != 0 && (pl.DstDT != pt || len(pl.PostOps) > 0) {
		return status.Errorf(status.InvalidArguments, "plan: a stage that writes partials needs an %v dst and no post-ops (src %v, dst %v, %d post-ops)", pt, pl.SrcDT, pl.DstDT, len(pl.PostOps))
	}
	return nil
}

// dimsProduct multiplies the dims i for which in(i) holds, or reports an
// overflow. A zero among them makes the product 0 whatever the others
// are.
func dimsProduct(dims []int64, in func(i int) bool) (int64, bool) {
	for i, d := range dims {
		if in(i) && d == 0 {
			return 0, true
		}
	}
	n := int64(1)
	for i, d := range dims {
		if in(i) {
			var ok bool
			if n, ok = mulSize(n, d); !ok {
				return 0, false
			}
		}
	}
	return n, true
}
