package jit

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// argTestISAs is argISAs, logged; a machine with none skips the test.
func argTestISAs(t *testing.T) []ISA {
	t.Helper()
	isas := argISAs()
	if len(isas) == 0 {
		t.Skip("no JIT ISA on this machine")
	}
	t.Logf("ISAs: %v", isas)
	return isas
}

// argISAs are the JIT ISAs this machine runs (capped by GDNN_MAX_CPU_ISA),
// AVX-512 alone under GDNN_TEST_REQUIRE_ISA.
func argISAs() []ISA {
	if req, _ := kerneltest.Required(); req != "" {
		return []ISA{AVX512} // as testISAs
	}
	var out []ISA
	for _, isa := range []ISA{AVX512, AVX2, NEON} {
		if supported(isa) && rank(isa) <= rank(EffectiveISA()) {
			out = append(out, isa)
		}
	}
	return out
}

// randomArgProblem draws an index reduction: rank 1 to 4, dims around
// the vector widths, the axis anywhere, strides dense, padded or
// permuted (strided axes), dst dense or padded.
func randomArgProblem(r *rand.Rand) *plan.ArgProblem {
	rank := 1 + r.IntN(4)
	p := &plan.ArgProblem{Min: r.IntN(2) == 0, Last: r.IntN(2) == 0, Abs: r.IntN(4) == 0, Axis: r.IntN(rank),
		Dims: make([]int64, rank), SrcStrides: make([]int64, rank), DstStrides: make([]int64, rank)}
	p.SrcDT = argJITSrcTypes[r.IntN(len(argJITSrcTypes))]
	p.IdxDT = []dtypes.DataType{dtypes.S32, dtypes.S64}[r.IntN(2)]
	for i := range p.Dims {
		switch r.IntN(5) {
		case 0:
			p.Dims[i] = 1
		case 1:
			p.Dims[i] = int64(30 + r.IntN(200))
		default:
			p.Dims[i] = int64(1 + r.IntN(20))
		}
	}
	for {
		n := int64(1)
		for _, d := range p.Dims {
			n *= d
		}
		if n <= 1<<15 {
			break
		}
		i := r.IntN(rank)
		p.Dims[i] = max(1, p.Dims[i]/2)
	}
	order := r.Perm(rank)
	if r.IntN(2) == 0 {
		for i := range order {
			order[i] = i
		}
	}
	st := int64(1 + r.IntN(2))
	for k := rank - 1; k >= 0; k-- {
		i := order[k]
		p.SrcStrides[i] = st
		st *= p.Dims[i] + int64(r.IntN(2))
	}
	st = 1
	for i := rank - 1; i >= 0; i-- {
		if i == p.Axis {
			continue
		}
		p.DstStrides[i] = st
		st *= p.Dims[i] + int64(r.IntN(2)*r.IntN(2))
	}
	return p
}

// argJITSrcTypes are the src types index kernels have machine code for.
var argJITSrcTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8,
	dtypes.S16, dtypes.U16, dtypes.S32, dtypes.U32, dtypes.F64, dtypes.S64, dtypes.U64}

// argSrc fills n elements of dt with values from a narrow range (ties),
// NaNs and infinities for the float types, the type's extremes for the
// integers.
func argSrc(r *rand.Rand, dt dtypes.DataType, n int64) []byte {
	if kernelshape.ArgIntLanes(dt) {
		return argIntSrc(r, dt, n)
	}
	b := make([]byte, n*int64(dt.Size()))
	put := func(i int64, v float32) {
		if dt == dtypes.F64 {
			binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(float64(v)))
			return
		}
		dtypes.StoreF32(dt, b, i, v)
	}
	span := 1 + r.IntN(6)
	nanRate := []int{0, 3, 50}[r.IntN(3)]
	for i := range n {
		v := float32(r.IntN(2*span+1) - span)
		switch {
		case dt == dtypes.S8 && r.IntN(30) == 0:
			v = float32(-128 + 255*r.IntN(2))
		case kernelshape.ArgNaNs(dt) && nanRate > 0 && r.IntN(nanRate) == 0:
			v = float32(math.NaN())
		case kernelshape.ArgNaNs(dt) && r.IntN(40) == 0:
			v = float32(math.Inf(1 - 2*r.IntN(2)))
		case dt == dtypes.U8:
			v = float32(r.IntN(span + 1))
		}
		put(i, v)
	}
	switch {
	case dt != dtypes.F64:
	case r.IntN(2) == 0:
		// Values an f32 would not tell apart.
		for i := range n {
			if x := math.Float64frombits(binary.LittleEndian.Uint64(b[i*8:])); x == x {
				binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(x+float64(r.IntN(3))*0x1p-40))
			}
		}
	case r.IntN(2) == 0:
		// Random low halves under the high halves of a few values of
		// either sign and wide exponents: elements that only the low
		// halves of their mantissas, bit 31 included, tell apart.
		var highs [3]uint64
		for j := range highs {
			x := math.Ldexp(1+r.Float64(), r.IntN(81)-40) * float64(1-2*r.IntN(2))
			highs[j] = math.Float64bits(x) &^ 0xFFFFFFFF
		}
		for i := range n {
			if x := math.Float64frombits(binary.LittleEndian.Uint64(b[i*8:])); x == x && !math.IsInf(x, 0) {
				binary.LittleEndian.PutUint64(b[i*8:], highs[r.IntN(len(highs))]|uint64(r.Uint32()))
			}
		}
	}
	return b
}

// argIntSrc fills n elements of the integer type dt with values from a
// narrow range around one of the type's edges (its least and greatest
// values, and the middle of its range: 0 for the signed types, 2^(bits-1)
// for the unsigned ones, where the sign bit flips), so that ties,
// extremes and the order across the sign bit all occur. Values are
// worked on as the type's bits: an offset from a centre wraps, and is
// kept only when it stays on the centre's side of the edge.
func argIntSrc(r *rand.Rand, dt dtypes.DataType, n int64) []byte {
	sz := int64(dt.Size())
	b := make([]byte, n*sz)
	bits := uint(8 * sz)
	mask := uint64(1)<<bits - 1
	if bits == 64 {
		mask = math.MaxUint64
	}
	// lo and hi as the type's bits; the middle is lo + 2^(bits-1).
	lo := uint64(0)
	if dt.IsSigned() {
		lo = 1 << (bits - 1)
	}
	hi := (lo - 1) & mask
	mid := (lo + 1<<(bits-1)) & mask
	// ord maps the bits to their order as values of dt (unsigned).
	ord := func(x uint64) uint64 { return (x - lo) & mask }
	centres := []uint64{lo, hi, mid}
	span := int64(1 + r.IntN(6))
	// For half the 64-bit cases, each value's low half is random under
	// the high half of a value near an edge: elements that only the low
	// halves, bit 31 included, tell apart.
	lowHalves := bits == 64 && r.IntN(2) == 0
	for i := range n {
		c := centres[r.IntN(len(centres))]
		d := r.Int64N(2*span+1) - span
		v := (c + uint64(d)) & mask
		if (d < 0 && ord(v) > ord(c)) || (d > 0 && ord(v) < ord(c)) {
			v = c // past the edge: clamp to it
		}
		if lowHalves {
			v = v&^0xFFFFFFFF | uint64(r.Uint32())
		}
		switch sz {
		case 2:
			binary.LittleEndian.PutUint16(b[i*2:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(b[i*4:], uint32(v))
		default:
			binary.LittleEndian.PutUint64(b[i*8:], v)
		}
	}
	return b
}

// TestArgKernels runs random index reductions on every ISA here, with src
// and dst against guard pages on either side, and checks the indices
// against the interpreter (itself checked against an exact reference in
// package reduce).
func TestArgKernels(t *testing.T) {
	isas := argTestISAs(t)
	r := rand.New(rand.NewPCG(51, 4))
	n := 400
	if testing.Short() {
		n = 100
	}
	for i := range n {
		checkArgProblem(t, r, randomArgProblem(r), isas, i%2 == 0)
	}
}

// FuzzArgKernels is TestArgKernels on problems drawn from the fuzzer's
// seeds, under every ISA here.
func FuzzArgKernels(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, seed uint64, atEnd bool) {
		r := rand.New(rand.NewPCG(seed, 51))
		checkArgProblem(t, r, randomArgProblem(r), argISAs(), atEnd)
	})
}

// checkArgProblem runs p on random data under each of isas, src and dst
// against guard pages (after them with atEnd, else before), and checks
// the indices against the interpreter's.
func checkArgProblem(t *testing.T, r *rand.Rand, p *plan.ArgProblem, isas []ISA, atEnd bool) {
	t.Helper()
	pl, err := plan.CanonicalizeArg(p)
	if err != nil {
		t.Fatalf("%+v: %v", p, err)
	}
	checkArgSrc(t, pl, argSrc(r, p.SrcDT, pl.SrcSpan()), isas, atEnd)
}

// checkArgSrc runs pl on src under each of isas, as checkArgProblem.
func checkArgSrc(t *testing.T, pl *plan.ArgPlan, src []byte, isas []ISA, atEnd bool) {
	t.Helper()
	want := make([]byte, pl.DstSpan()*int64(pl.IdxDT.Size()))
	for j := range want {
		want[j] = 0xA5
	}
	got0 := bytes.Clone(want)
	if err := interp.RunArg(pl, src, want); err != nil {
		t.Fatal(err)
	}
	for _, isa := range isas {
		k, err := buildArg(pl, isa)
		if err != nil {
			t.Fatalf("%s %s: %v", isa, pl.Key(), err)
		}
		if k.Impl() == "interp" {
			t.Fatalf("%s %s: not compiled: %s", isa, pl.Key(), k.why)
		}
		f := kerneltest.NewFence(t, atEnd)
		got := f.Place(bytes.Clone(got0))
		if err := k.Run(f.Place(src), got); err != nil {
			t.Fatalf("%s %s: %v", isa, pl.Key(), err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s %s: indices differ\n got %v\nwant %v", isa, pl.Key(), words(got, pl.IdxDT), words(want, pl.IdxDT))
		}
		f.Free()
		k.release()
	}
}

// runArgThreads runs k on src at each thread count and fails where its
// indices differ from want.
func runArgThreads(t *testing.T, k *ArgKernel, src, want []byte, threads ...int) {
	t.Helper()
	for _, th := range threads {
		prev := SetThreads(th)
		got := make([]byte, len(want))
		err := k.Run(src, got)
		SetThreads(prev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s %s, %d threads: got %v, want %v", k.Impl(), k.pl.Key(), th, words(got, k.pl.IdxDT), words(want, k.pl.IdxDT))
		}
	}
}

// words reads a dst buffer as indices.
func words(b []byte, dt dtypes.DataType) []int64 {
	var out []int64
	for i := 0; i+dt.Size() <= len(b); i += dt.Size() {
		if dt == dtypes.S64 {
			out = append(out, int64(binary.LittleEndian.Uint64(b[i:])))
		} else {
			out = append(out, int64(int32(binary.LittleEndian.Uint32(b[i:]))))
		}
	}
	return out
}

// TestArgSkippedBlocks checks the rows' skipped blocks
// (kernelshape.ArgBlockSkipper) on every ISA here: each row of a problem
// is one row of data, its winner made its only one, with the winner
// copied (the first half of the rows) or moved (the second half) to one
// element, so that each lane of the blocks that hold those elements is
// in turn the only one that ties with, or beats, the bound. The elements are the first few and those from
// the ninth of AVX-512's blocks on, which are checked after the first
// block and the ArgSkipRest unchecked ones after it (-short: the ninth
// block and the tail). The data holds no NaN, so that the kernels keep
// the blocks they skip.
func TestArgSkippedBlocks(t *testing.T) {
	isas := argTestISAs(t)
	r := rand.New(rand.NewPCG(51, 12))
	// Twelve blocks of AVX-512's eight vectors of 16 lanes, and a tail.
	const block = 8 * 16
	const n = 12*block + 5
	var at []int64
	for q := range int64(n) {
		switch {
		case q < 16, q >= 8*block && (!testing.Short() || q < 9*block+16 || q >= n-5):
			at = append(at, q)
		}
	}
	for _, dt := range argJITSrcTypes {
		sz := int64(dt.Size())
		row := argSrc(r, dt, n)
		for i := range int64(n) {
			if argNaN(row, dt, i) {
				copy(row[i*sz:(i+1)*sz], make([]byte, sz))
			}
		}
		// index is the interpreter's index of row's first greatest
		// (least) element.
		index := func(min bool) int64 {
			p := &plan.ArgProblem{SrcDT: dt, IdxDT: dtypes.S32, Min: min,
				Dims: []int64{n}, SrcStrides: []int64{1}, DstStrides: []int64{0}}
			pl, err := plan.CanonicalizeArg(p)
			if err != nil {
				t.Fatalf("%+v: %v", p, err)
			}
			idx := make([]byte, 4)
			if err := interp.RunArg(pl, row, idx); err != nil {
				t.Fatal(err)
			}
			return int64(binary.LittleEndian.Uint32(idx))
		}
		for v := range 4 {
			one := &plan.ArgProblem{SrcDT: dt, IdxDT: dtypes.S32, Min: v&1 != 0, Last: v&2 != 0,
				Dims: []int64{1, n}, Axis: 1, SrcStrides: []int64{n, 1}, DstStrides: []int64{1, 0}}
			// The winner w made the row's only one: its ties take the
			// value of the loser l.
			w, l := index(one.Min), index(!one.Min)
			won := bytes.Clone(row)
			e := func(b []byte, i int64) []byte { return b[i*sz : (i+1)*sz] }
			for i := range int64(n) {
				if i != w && bytes.Equal(e(won, i), e(row, w)) {
					copy(e(won, i), e(row, l))
				}
			}
			p := *one
			p.Dims = []int64{2 * int64(len(at)), n}
			pl, err := plan.CanonicalizeArg(&p)
			if err != nil {
				t.Fatalf("%+v: %v", p, err)
			}
			src := make([]byte, 0, p.Dims[0]*n*sz)
			for k := range 2 * len(at) {
				src = append(src, won...)
				out := src[len(src)-len(won):]
				q := at[k%len(at)]
				if k < len(at) {
					copy(e(out, q), e(out, w))
					continue
				}
				held := bytes.Clone(e(out, q))
				copy(e(out, q), e(out, w))
				copy(e(out, w), held)
			}
			checkArgSrc(t, pl, src, isas, v%2 == 0)
		}
	}
}

// argNaN reports whether element i of b, of dt, is a NaN.
func argNaN(b []byte, dt dtypes.DataType, i int64) bool {
	switch {
	case dt == dtypes.F64:
		return math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(b[i*8:])))
	case dt.IsFloat():
		return math.IsNaN(float64(dtypes.LoadF32(dt, b, i)))
	}
	return false
}

// TestArgSplitInner checks the plans whose wide Inner the runtime cuts
// into blocks for threads, against the interpreter on the uncut plan,
// at several thread counts.
func TestArgSplitInner(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 6))
	for _, c := range []struct {
		dims  []int64
		block int64
		dt    dtypes.DataType
	}{{[]int64{37, 1024}, 512, dtypes.F32}, {[]int64{3, 4096}, 1024, dtypes.F32}, {[]int64{1, 1536}, 512, dtypes.F32},
		{[]int64{64, 3072}, 1024, dtypes.F32}, {[]int64{70, 6144}, 1024, dtypes.F32},
		// 64-bit lanes: the kernel cuts each block into scratch blocks of 512.
		{[]int64{70, 6144}, 1024, dtypes.F64}, {[]int64{66, 3072}, 1024, dtypes.S64}} {
		dims := c.dims
		p := &plan.ArgProblem{SrcDT: c.dt, IdxDT: dtypes.S32, Dims: dims, SrcStrides: []int64{dims[1], 1},
			DstStrides: []int64{0, 1}, Axis: 0, Last: dims[0]%2 == 1}
		pl, err := plan.CanonicalizeArg(p)
		if err != nil {
			t.Fatal(err)
		}
		if sp := splitInner(pl); len(sp.Outer) != 1 || sp.Inner.Size != c.block {
			t.Fatalf("%v: not split into blocks of %d: %s", dims, c.block, sp.Key())
		}
		src := argSrc(r, p.SrcDT, pl.SrcSpan())
		want := make([]byte, 4*dims[1])
		if err := interp.RunArg(pl, src, want); err != nil {
			t.Fatal(err)
		}
		k, err := CompileArg(pl)
		if err != nil {
			t.Fatal(err)
		}
		runArgThreads(t, k, src, want, 1, 2, 5)
	}
}

// TestArgRowByRow checks column plans that go row by row through the
// scratch (kernelshape.ArgRowByRow) on every ISA here: widths at the
// threshold, past the scratch's block with remainders below and above a
// vector, row counts of each remainder of the row group, kept loops
// outside, padded rows, every src and index type, ties and NaNs.
func TestArgRowByRow(t *testing.T) {
	isas := argTestISAs(t)
	r := rand.New(rand.NewPCG(51, 8))
	shapes := [][]int64{{64, 256}, {65, 257}, {66, 300}, {67, 511}, {64, 2048}, {67, 2049}, {66, 2063}, {65, 4296}, {99, 1000}, {3, 70, 700}, {2, 68, 2050}}
	srcTypes := argJITSrcTypes
	for i, dims := range shapes {
		for j := range 4 {
			rank := len(dims)
			p := &plan.ArgProblem{SrcDT: srcTypes[(i+j)%len(srcTypes)], IdxDT: []dtypes.DataType{dtypes.S32, dtypes.S64}[j%2],
				Min: j&2 != 0, Last: (i+j)%2 == 1, Abs: (i+j)%3 == 0, Axis: rank - 2, Dims: dims,
				SrcStrides: make([]int64, rank), DstStrides: make([]int64, rank)}
			pad := int64(i % 2 * (1 + j))
			st := int64(1)
			for k := rank - 1; k >= 0; k-- {
				p.SrcStrides[k] = st
				st *= dims[k]
				if k == rank-1 {
					st += pad
				}
			}
			st = 1
			for k := rank - 1; k >= 0; k-- {
				if k != p.Axis {
					p.DstStrides[k] = st
					st *= dims[k]
				}
			}
			pl, err := plan.CanonicalizeArg(p)
			if err != nil {
				t.Fatalf("%+v: %v", p, err)
			}
			if !kernelshape.ArgRowByRow(pl) {
				t.Fatalf("%v: %s does not go row by row", dims, pl.Key())
			}
			checkArgProblem(t, r, p, isas, j%2 == 0)
		}
	}
}

// TestArgNaNRerun places NaNs where a kernel that runs a block or a row
// with the one-compare update and reruns it exactly on a NaN would go
// wrong if the rerun were missed or misplaced: the first and last
// element of a row or column, the stepped-back tail, a column in a
// later block than the first, one column of many, two NaNs (the first
// wins, or the last with select_last_index), and +Inf beside -Inf with
// no NaN. The other elements are few values (ties), -0 and +0.
func TestArgNaNRerun(t *testing.T) {
	isas := argTestISAs(t)
	r := rand.New(rand.NewPCG(51, 10))
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		dims []int64
		axis int
		at   [][2]int64 // (row, column) of each NaN; -1: the last
	}{
		// Rows (axis 1): the first, last and tail elements, one row of several.
		{[]int64{3, 1000}, 1, [][2]int64{{0, 0}}},
		{[]int64{3, 1000}, 1, [][2]int64{{2, -1}}},
		{[]int64{3, 1000}, 1, [][2]int64{{1, 999 - 5}, {1, 998}}},
		{[]int64{2, 37}, 1, [][2]int64{{1, 36}}},
		{[]int64{2, 37}, 1, [][2]int64{{0, 3}, {0, 35}}},
		{[]int64{1, 32000}, 1, [][2]int64{{0, 31999}}},
		{[]int64{1, 32000}, 1, [][2]int64{{0, 7}, {0, 16000}}},
		// The second vector of a pair that one compare folds into a
		// witness (AVX2, AVX-512 row by row), in each pair of a block.
		{[]int64{1, 32000}, 1, [][2]int64{{0, 168}}},
		{[]int64{3, 1000}, 1, [][2]int64{{1, 120}}},
		{[]int64{1, 32000}, 1, [][2]int64{{0, 16*100 + 60}}},
		// The same for 64-bit lanes: the second vector of each pair of an
		// AVX-512 block (eight vectors of eight, 64 elements), the last
		// two also the second vector of AVX2's second pair (a block of
		// four vectors of four), then that of AVX2's first pair.
		{[]int64{1, 32000}, 1, [][2]int64{{0, 64*100 + 8}}},
		{[]int64{1, 32000}, 1, [][2]int64{{0, 64*110 + 24 + 3}}},
		{[]int64{1, 32000}, 1, [][2]int64{{0, 64*120 + 40 + 5}}},
		{[]int64{1, 32000}, 1, [][2]int64{{0, 64*130 + 56 + 7}}},
		{[]int64{1, 32000}, 1, [][2]int64{{0, 64*150 + 4}}},
		// Columns (axis 0) held in registers: the first, last, tail column.
		{[]int64{50, 200}, 0, [][2]int64{{0, 0}}},
		{[]int64{50, 200}, 0, [][2]int64{{49, 199}}},
		{[]int64{50, 200}, 0, [][2]int64{{20, 101}, {30, 101}}},
		{[]int64{9, 45}, 0, [][2]int64{{8, 44}}},
		{[]int64{9, 45}, 0, [][2]int64{{0, 40}}},
		{[]int64{50, 200}, 0, [][2]int64{{25, 48}}},
		{[]int64{50, 200}, 0, [][2]int64{{26, 63 + 80}}},
		// Columns row by row: one column of many, in a later block, in the
		// block of the outputs left.
		{[]int64{70, 4500}, 0, [][2]int64{{0, 0}}},
		{[]int64{70, 4500}, 0, [][2]int64{{69, 4499}}},
		{[]int64{70, 4500}, 0, [][2]int64{{33, 2048}}},
		{[]int64{70, 4500}, 0, [][2]int64{{3, 4097}, {68, 4097}}},
		{[]int64{67, 2063}, 0, [][2]int64{{66, 2062}}},
		{[]int64{67, 2063}, 0, [][2]int64{{65, 2047}, {1, 2050}}},
		{[]int64{70, 4500}, 0, [][2]int64{{40, 1024 + 8 + 32*7}}},
		{[]int64{70, 4500}, 0, [][2]int64{{41, 3*1024 + 24 + 64*3}}},
		{[]int64{70, 4500}, 0, [][2]int64{{42, 3*1024 + 16 + 64*5}}},
	} {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.F64} {
			for v := range 5 {
				p := &plan.ArgProblem{SrcDT: dt, IdxDT: []dtypes.DataType{dtypes.S32, dtypes.S64}[v%2],
					Min: v&1 != 0, Last: v&2 != 0, Abs: v == 4, Axis: c.axis, Dims: c.dims,
					SrcStrides: []int64{c.dims[1], 1}, DstStrides: []int64{0, 0}}
				p.DstStrides[1-c.axis] = 1
				pl, err := plan.CanonicalizeArg(p)
				if err != nil {
					t.Fatalf("%+v: %v", p, err)
				}
				n := c.dims[0] * c.dims[1]
				vals := make([]float32, n)
				for i := range vals {
					vals[i] = float32(r.IntN(7) - 3)
					if vals[i] == 0 && r.IntN(2) == 0 {
						vals[i] = float32(math.Copysign(0, -1))
					}
				}
				if v == 3 {
					// +Inf and -Inf in every column and row, no NaN: a
					// witness that sums may turn NaN with no NaN loaded.
					for i := range vals {
						if r.IntN(9) == 0 {
							vals[i] = inf * float32(1-2*r.IntN(2))
						}
					}
				} else {
					for _, a := range c.at {
						row, col := a[0], a[1]
						if col < 0 {
							col = c.dims[1] - 1
						}
						vals[row*c.dims[1]+col] = nan
					}
				}
				src := make([]byte, n*int64(dt.Size()))
				for i, x := range vals {
					if dt == dtypes.F64 {
						binary.LittleEndian.PutUint64(src[i*8:], math.Float64bits(float64(x)))
						continue
					}
					dtypes.StoreF32(dt, src, int64(i), x)
				}
				t.Run("", func(t *testing.T) { checkArgSrc(t, pl, src, isas, v%2 == 0) })
			}
		}
	}
}
