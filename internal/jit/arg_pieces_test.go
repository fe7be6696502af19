package jit

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// TestArgAxisPieces checks index kernels over axes longer than one call
// may read (argPieceBytes, lowered here): rows, columns and rows of a
// kept middle dim of every src type with machine code, under every rule,
// cut into pieces of 64 elements up to half the axis. Each runs against
// the interpreter on every ISA here, against guard pages and at one to
// three threads, and no piece reads more than the bound.
func TestArgAxisPieces(t *testing.T) {
	isas, r, n := cutTestSetup(t, 7, 120, 40)
	for i := range n {
		R := int64(130 + r.IntN(3000))
		a, w := int64(1+r.IntN(3)), int64(1+r.IntN(9))
		p := randomArgRules(r)
		switch i % 4 {
		case 0: // one row
			p.Dims, p.Axis = []int64{R}, 0
		case 1: // rows
			p.Dims, p.Axis = []int64{a, R}, 1
		case 2: // columns
			p.Dims, p.Axis = []int64{R, w}, 0
		default: // a kept dim on each side
			p.Dims, p.Axis = []int64{a, R, w}, 1
		}
		p.SrcStrides, p.DstStrides = denseStrides(p.Dims), denseStrides(p.Dims)
		pl, err := plan.CanonicalizeArg(p)
		if err != nil {
			t.Fatal(err)
		}
		piece := int64(minArgPiece + r.IntN(int(R/2)-minArgPiece+1))
		argPieceBytes = piece * argBytesPerR(pl)
		if got := argPieceR(pl); got != piece {
			t.Fatalf("%s: pieces of %d, want %d", pl.Key(), got, piece)
		}
		checkArgCuts(t, pl, argSrc(r, p.SrcDT, pl.SrcSpan()), isas, i%2 == 0, func(k *ArgKernel) string {
			if k.piece == nil || k.piece.pl.R != piece || (R%piece != 0) != (k.tail != nil) {
				return "axis not cut into pieces of " + strconv.FormatInt(piece, 10)
			}
			for _, c := range []*ArgKernel{k.piece, k.tail} {
				if c != nil && c.pl.R*argBytesPerR(c.pl) > argPieceBytes {
					return "a piece reads more than the bound an iteration"
				}
			}
			return ""
		})
	}
}

// checkArgCuts runs pl on src as checkArgSrc does, and then under each of
// isas at one to three threads, after checking its kernel with cut
// (which returns what is wrong with it, or "").
func checkArgCuts(t *testing.T, pl *plan.ArgPlan, src []byte, isas []ISA, atEnd bool, cut func(k *ArgKernel) string) {
	t.Helper()
	checkArgSrc(t, pl, src, isas, atEnd)
	want := make([]byte, pl.DstSpan()*int64(pl.IdxDT.Size()))
	if err := interp.RunArg(pl, src, want); err != nil {
		t.Fatal(err)
	}
	for _, isa := range isas {
		k, err := buildArg(pl, isa)
		if err != nil {
			t.Fatal(err)
		}
		if msg := cut(k); msg != "" {
			t.Fatalf("%s %s: %s", isa, pl.Key(), msg)
		}
		runArgThreads(t, k, src, want, 1, 2, 3)
		k.release()
	}
}

// TestArgAxisPiecesRules checks the fold of pieces on one f32 row of
// 1000 cut into pieces of 100, with each rule's winner in a later piece
// than a tie or NaN it must beat, or lose to.
func TestArgAxisPiecesRules(t *testing.T) {
	isas := argTestISAs(t)
	defer func(b int64) { argPieceBytes = b }(argPieceBytes)
	argPieceBytes = 400
	nan := float32(math.NaN())
	for _, c := range []struct {
		name           string
		at             map[int]float32
		min, last, abs bool
		want           int64
	}{
		{name: "ties, first", at: map[int]float32{120: 5, 880: 5}, want: 120},
		{name: "ties, last", at: map[int]float32{120: 5, 880: 5}, last: true, want: 880},
		{name: "later larger", at: map[int]float32{120: 5, 880: 6}, want: 880},
		{name: "NaNs, first", at: map[int]float32{150: nan, 750: nan, 900: 9}, want: 150},
		{name: "NaNs, last", at: map[int]float32{150: nan, 750: nan, 900: 9}, last: true, want: 750},
		{name: "min NaN", at: map[int]float32{99: -9, 750: nan}, min: true, want: 750},
		{name: "abs ties", at: map[int]float32{300: -5, 600: 5}, abs: true, want: 300},
		{name: "abs ties, last", at: map[int]float32{300: -5, 600: 5}, abs: true, last: true, want: 600},
		{name: "all equal, last", at: map[int]float32{}, last: true, want: 999},
		{name: "min in the tail piece", at: map[int]float32{999: -1}, min: true, want: 999},
	} {
		p := &plan.ArgProblem{Min: c.min, Last: c.last, Abs: c.abs, SrcDT: dtypes.F32, IdxDT: dtypes.S64,
			Dims: []int64{1000}, SrcStrides: []int64{1}, DstStrides: []int64{1}}
		pl, err := plan.CanonicalizeArg(p)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, 4000)
		for i, v := range c.at {
			binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
		}
		for _, isa := range isas {
			k, err := buildArg(pl, isa)
			if err != nil {
				t.Fatal(err)
			}
			if k.piece == nil || k.piece.pl.R != 100 {
				t.Fatalf("%s %s: not cut into pieces of 100", c.name, isa)
			}
			got := make([]byte, 8)
			if err := k.Run(src, got); err != nil {
				t.Fatal(err)
			}
			if i := int64(binary.LittleEndian.Uint64(got)); i != c.want {
				t.Errorf("%s %s: index %d, want %d", c.name, isa, i, c.want)
			}
			k.release()
		}
	}
}

// TestArgPeeledLoops checks index kernels whose outermost loop reads
// more than argPieceBytes (lowered here) an iteration over an axis too
// short to cut: lanes beside the axis, under one or two kept dims. The
// outermost loops run in Go, down to a kernel whose iterations fit.
// Each runs against the interpreter on every ISA here, against guard
// pages and at one to three threads.
func TestArgPeeledLoops(t *testing.T) {
	isas, r, n := cutTestSetup(t, 8, 60, 20)
	for i := range n {
		R, w := int64(2+r.IntN(40)), int64(1024*(1+r.IntN(3)))
		if r.IntN(3) == 0 {
			w = int64(100 + r.IntN(900)) // lanes splitInner leaves whole
		}
		a, b := int64(2+r.IntN(3)), int64(2+r.IntN(3))
		p := randomArgRules(r)
		if i%2 == 0 {
			p.Dims, p.Axis = []int64{a, R, w}, 1
		} else {
			p.Dims, p.Axis = []int64{a, b, R, w}, 2
		}
		p.SrcStrides, p.DstStrides = denseStrides(p.Dims), denseStrides(p.Dims)
		pl, err := plan.CanonicalizeArg(p)
		if err != nil {
			t.Fatal(err)
		}
		// An iteration of the outermost loop reads more than the bound,
		// whose pieces of the axis would be shorter than minArgPiece.
		argPieceBytes = R * argBytesPerR(pl) / 2
		checkArgCuts(t, pl, argSrc(r, p.SrcDT, pl.SrcSpan()), isas, i%2 == 0, func(k *ArgKernel) string {
			if k.peel == nil {
				return "outermost loop not run in Go"
			}
			return ""
		})
	}
}

// TestArgPeeledPieces checks kernels that run their outermost loop in Go
// around kernels that cut the axis into pieces: two images of 2048 lanes
// (an iteration of 300 rows of 8 KiB reads more than the bound, and
// pieces of it would be under minArgPiece rows), then blocks of 1024
// lanes, whose 300 rows are cut into pieces of 64 and a last one of 44.
// Every src type, against the interpreter on every ISA here.
func TestArgPeeledPieces(t *testing.T) {
	isas := argTestISAs(t)
	defer func(b int64) { argPieceBytes = b }(argPieceBytes)
	r := rand.New(rand.NewPCG(52, 9))
	for _, dt := range argJITSrcTypes {
		p := randomArgRules(r)
		p.SrcDT, p.Dims, p.Axis = dt, []int64{2, 300, 2048}, 1
		p.SrcStrides, p.DstStrides = denseStrides(p.Dims), denseStrides(p.Dims)
		pl, err := plan.CanonicalizeArg(p)
		if err != nil {
			t.Fatal(err)
		}
		argPieceBytes = 64 * 1024 * int64(dt.Size())
		checkArgCuts(t, pl, argSrc(r, dt, pl.SrcSpan()), isas, false, func(k *ArgKernel) string {
			if got := k.schedule(); got != "split:index+outer-in-go+pieces:64" {
				return "schedule " + got
			}
			return ""
		})
	}
}

// TestArgLaneBlocks checks kernels that cut the lanes of a plan without
// an outer loop into blocks: columns of 65 to 3000 lanes (any width, src
// lanes dense or two apart, dst dense or padded) over 2 to 40 rows, with
// argPieceBytes (lowered) a block of 64 to 256 lanes, and over 300 rows,
// whose blocks of 64 lanes are cut into pieces of 100 rows in turn. Every
// src type, against the interpreter on every ISA here, at one to three
// threads; no call reads more than the bound.
func TestArgLaneBlocks(t *testing.T) {
	isas, r, n := cutTestSetup(t, 10, 60, 20)
	for i := range n {
		p := randomArgRules(r)
		R, w := int64(2+r.IntN(39)), int64(65+r.IntN(2936))
		if i%4 == 3 {
			R, w = 300, 200+w // lanes enough that the axis's pieces would be under 64 rows
		}
		ls, ld := int64(1+r.IntN(2)), int64(1+r.IntN(2))
		p.Dims, p.SrcStrides, p.DstStrides = []int64{R, w}, []int64{w * ls, ls}, []int64{0, ld}
		pl, err := plan.CanonicalizeArg(p)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(p.SrcDT.Size())
		lanes, want := int64(64*(1+r.IntN(4))), "split:index+lane-blocks:"
		argPieceBytes = R * size * lanes
		if R == 300 {
			lanes, argPieceBytes = 64, 100*64*size
			want += "64+pieces:100"
		} else {
			want += strconv.FormatInt(lanes, 10)
		}
		if w <= lanes {
			continue // nothing to cut
		}
		checkArgCuts(t, pl, argSrc(r, p.SrcDT, pl.SrcSpan()), isas, i%2 == 0, func(k *ArgKernel) string {
			if got := k.schedule(); got != want {
				return "schedule " + got + ", want " + want
			}
			return overBound(k)
		})
	}
}

// overBound says which call of k reads more than argPieceBytes an
// iteration, or "".
func overBound(k *ArgKernel) string {
	msg := ""
	k.each(func(leaf *ArgKernel) {
		if b := leaf.pl.R * argBytesPerR(leaf.pl); leaf.code != nil && b > argPieceBytes && msg == "" {
			msg = fmt.Sprintf("a call of %s reads %d bytes an iteration, more than %d", leaf.pl.Key(), b, argPieceBytes)
		}
	})
	return msg
}

// TestArgCallBounds checks, at the default bound, that no call of an
// index kernel reads more than argPieceBytes an iteration: a segmentation
// map's ArgMax over 21 channels of four 512x512 images (22 MB an image),
// and one row of 100M elements. It compiles them but runs nothing.
func TestArgCallBounds(t *testing.T) {
	isas := argTestISAs(t)
	for _, c := range []struct {
		dims, ss, ds []int64 // strides: dense where nil
		axis         int
	}{
		{dims: []int64{4, 21, 512, 512}, axis: 1},
		{dims: []int64{100_000_000}},
		{dims: []int64{3, 100_000_000}, axis: 1},
		// Lanes no block width divides, dst lanes two apart, src lanes
		// two apart: blocks cut with a rest.
		{dims: []int64{100, 1_000_003}},
		{dims: []int64{100, 1 << 20}, ds: []int64{0, 2}},
		{dims: []int64{100, 1 << 20}, ss: []int64{1 << 21, 2}},
	} {
		p := &plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: c.dims, Axis: c.axis,
			SrcStrides: c.ss, DstStrides: c.ds}
		if p.SrcStrides == nil {
			p.SrcStrides = denseStrides(c.dims)
		}
		if p.DstStrides == nil {
			p.DstStrides = denseStrides(c.dims)
		}
		pl, err := plan.CanonicalizeArg(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, isa := range isas {
			k, err := buildArg(splitInner(pl), isa)
			if err != nil {
				t.Fatal(err)
			}
			if k.Impl() == "interp" {
				t.Errorf("%v %s: no machine code: %s", c.dims, isa, k.why)
			}
			if msg := overBound(k); msg != "" {
				t.Errorf("%v %s: %s", c.dims, isa, msg)
			}
			k.release()
		}
	}
}

// cutTestSetup returns the ISAs here, a generator of seed and how many
// problems to draw (short under -short), and restores argPieceBytes,
// which the test lowers, when t ends.
func cutTestSetup(t *testing.T, seed uint64, n, short int) ([]ISA, *rand.Rand, int) {
	t.Helper()
	isas := argTestISAs(t)
	b := argPieceBytes
	t.Cleanup(func() { argPieceBytes = b })
	if testing.Short() {
		n = short
	}
	return isas, rand.New(rand.NewPCG(52, seed)), n
}

// randomArgRules draws an index reduction's rules and types, with no
// shape yet: any src type with machine code, s32 or s64 indices.
func randomArgRules(r *rand.Rand) *plan.ArgProblem {
	return &plan.ArgProblem{Min: r.IntN(2) == 0, Last: r.IntN(2) == 0, Abs: r.IntN(4) == 0,
		SrcDT: argJITSrcTypes[r.IntN(len(argJITSrcTypes))], IdxDT: []dtypes.DataType{dtypes.S32, dtypes.S64}[r.IntN(2)]}
}

// denseArgPlan is the ArgMax plan of dense f32 dims over axis, with s64
// indices, as CompileArg schedules it (splitInner).
func denseArgPlan(t *testing.T, dims []int64, axis int) *plan.ArgPlan {
	t.Helper()
	pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: dims, Axis: axis,
		SrcStrides: denseStrides(dims), DstStrides: denseStrides(dims)})
	if err != nil {
		t.Fatal(err)
	}
	return splitInner(pl)
}

// stridedArgPlan is the plan of an index reduction of dims over axis,
// src of type dt with strides ss (dense: nil), into s32 indices at
// src's dense strides, the axis's 0 (outputs a row apart where the axis
// is innermost).
func stridedArgPlan(t testing.TB, dt dtypes.DataType, dims, ss []int64, axis int) *plan.ArgPlan {
	t.Helper()
	if ss == nil {
		ss = denseStrides(dims)
	}
	ds := denseStrides(dims)
	ds[axis] = 0
	pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dt, IdxDT: dtypes.S32, Dims: dims, Axis: axis, SrcStrides: ss, DstStrides: ds})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// denseStrides are the row-major strides of dims.
func denseStrides(dims []int64) []int64 {
	st := make([]int64, len(dims))
	n := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		st[i] = n
		n *= dims[i]
	}
	return st
}

// TestArgScheduleNamesCuts checks that the verbose schedule of an index
// kernel names how its long calls were cut.
func TestArgScheduleNamesCuts(t *testing.T) {
	isas := argTestISAs(t)
	defer func(b int64) { argPieceBytes = b }(argPieceBytes)
	for _, c := range []struct {
		dims  []int64
		axis  int
		bound int64
		want  string
	}{
		{[]int64{5000}, 0, 4 << 10, "split:index+pieces:1024"},
		// Outer loops merged into one of 12, 40 KB an iteration; inside
		// it, blocks of 1024 lanes (20 KB an iteration) or of 512 (10 KB).
		{[]int64{3, 4, 5, 2048}, 2, 64 << 10, "split:index"},
		{[]int64{3, 4, 5, 2048}, 2, 32 << 10, "split:index+outer-in-go"},
		{[]int64{3, 4, 5, 2048}, 2, 16 << 10, "split:index+outer-in-go+outer-in-go"},
		{[]int64{30, 20}, 1, 4 << 10, "split:index"},
	} {
		argPieceBytes = c.bound
		k, err := buildArg(denseArgPlan(t, c.dims, c.axis), isas[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := k.schedule(); got != c.want {
			t.Errorf("%v over %d, bound %d: schedule %q, want %q", c.dims, c.axis, c.bound, got, c.want)
		}
		k.release()
	}
}

// TestArgBroadcastLanesCompile compiles index reductions whose lanes
// beside the axis are many more than src's bytes (kept dims of src
// stride 0 into a dst of 2^60 and more indices): where the axis is too
// short for copies of indices to pay (broadcastPays), the bytes an
// iteration reads do not fit an int64, and the kernel must not divide
// by their wrapped count; it cuts the lanes into blocks as any others.
// Else the broadcast dims are taken out of the kernel. Nothing runs: no
// dst that size exists.
func TestArgBroadcastLanesCompile(t *testing.T) {
	argTestISAs(t)
	for _, c := range []struct {
		dims, ss, ds []int64
		want         string
	}{
		{[]int64{4, 1 << 61}, []int64{1, 0}, []int64{0, 1}, "split:index+lane-blocks:8192"},
		{[]int64{4, 1 << 60}, []int64{1, 0}, []int64{0, 1}, "split:index+lane-blocks:8192"},
		{[]int64{3, 1 << 30, 1 << 30}, []int64{1 << 20, 0, 1}, []int64{0, 1 << 30, 1}, "split:index+broadcast:1073741824"},
	} {
		pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F64, IdxDT: dtypes.S32, Dims: c.dims,
			SrcStrides: c.ss, DstStrides: c.ds})
		if err != nil {
			t.Fatalf("%v: %v", c.dims, err)
		}
		k, err := CompileArg(pl)
		if err != nil {
			t.Fatalf("%v: %v", c.dims, err)
		}
		if got := k.schedule(); got != c.want {
			t.Errorf("%v: schedule %q, want %q", c.dims, got, c.want)
		}
	}
}

// TestArgCutFallsBack checks that a cut kernel one of whose parts the
// emitter refuses runs on the interpreter whole, saying which part:
// a piece, the loops inside a peeled outermost loop, a block of lanes.
func TestArgCutFallsBack(t *testing.T) {
	isas, r, _ := cutTestSetup(t, 11, 1, 1)
	prev := emitArg
	t.Cleanup(func() { emitArg = prev })
	for _, c := range []struct {
		dims  []int64
		axis  int
		bound int64
		why   string
	}{
		{[]int64{5000}, 0, 4 << 10, "a piece of the cut axis"},
		{[]int64{3, 4, 5, 2048}, 2, 32 << 10, "the loops inside the outermost"},
		{[]int64{40, 3001}, 0, 40 * 4 * 128, "a block of the cut lanes"},
	} {
		argPieceBytes = c.bound
		pl := denseArgPlan(t, c.dims, c.axis)
		// Refuse every plan but the whole one: only the cut's parts.
		emitArg = func(p *plan.ArgPlan, isa ISA) ([]byte, error) {
			if p.Key() != pl.Key() {
				return nil, status.Errorf(status.Unimplemented, "refused by the test")
			}
			return prev(p, isa)
		}
		src := argSrc(r, dtypes.F32, pl.SrcSpan())
		want := make([]byte, pl.DstSpan()*8)
		if err := interp.RunArg(pl, src, want); err != nil {
			t.Fatal(err)
		}
		for _, isa := range isas {
			k, err := buildArg(pl, isa)
			if err != nil {
				t.Fatal(err)
			}
			if k.Impl() != "interp" || !strings.HasPrefix(k.Why(), c.why+": ") {
				t.Errorf("%v %s: %s, %q; want the interpreter, %q", c.dims, isa, k.Impl(), k.Why(), c.why)
			}
			runArgThreads(t, k, src, want, 1, 2)
		}
	}
}

// TestArgBroadcastCalls: an index kernel over a broadcast src (lanes or
// an outer loop of stride 0, or windows that overlap) cuts its calls by
// what they read, not by the span they address, which is a row: one
// row of 2000 broadcast over 65536 lanes was one call of 512 MB of
// reads, seconds that Go's stop-the-world waited for. Every call reads
// at most argCallBytes or one iteration, and a run of many calls takes
// two threads; smaller ones run against the interpreter, at one and two
// threads, against guard pages.
func TestArgBroadcastCalls(t *testing.T) {
	isas := argTestISAs(t)
	for _, c := range []struct {
		dims, ss []int64
		axis     int
		run      bool
	}{
		{dims: []int64{65536, 2000}, ss: []int64{0, 1}, axis: 1},
		{dims: []int64{2000, 65536}, ss: []int64{1, 0}, axis: 0},
		{dims: []int64{1 << 20, 2000}, ss: []int64{1, 1}, axis: 1}, // sliding windows
		{dims: []int64{700, 333}, ss: []int64{0, 1}, axis: 1, run: true},
		{dims: []int64{333, 700}, ss: []int64{1, 0}, axis: 0, run: true},
		{dims: []int64{9, 700, 333}, ss: []int64{333, 0, 1}, axis: 2, run: true},
	} {
		pl := stridedArgPlan(t, dtypes.F32, c.dims, c.ss, c.axis)
		for _, isa := range isas {
			k, err := buildArg(splitInner(pl), isa)
			if err != nil {
				t.Fatal(err)
			}
			k.each(func(leaf *ArgKernel) {
				if leaf.code == nil {
					return
				}
				per := plan.MulSat(argBytesPerR(leaf.pl), leaf.pl.R)
				_, chunk, calls := argSplit(leaf.pl, 2)
				if reads := plan.MulSat(per, chunk); reads > max(argCallBytes, per) {
					t.Errorf("%v %s: a call of %s reads %d bytes (%d iterations of %d), more than %d", c.dims, isa, leaf.pl.Key(), reads, chunk, per, argCallBytes)
				}
				if total := argWork(leaf.pl); total >= 4*argCallBytes && calls < 2 {
					t.Errorf("%v %s: %s reads %d bytes in %d call", c.dims, isa, leaf.pl.Key(), total, calls)
				}
			})
			k.release()
		}
		if c.run {
			src := make([]byte, 4*pl.SrcSpan())
			r := rand.New(rand.NewPCG(uint64(c.dims[0]), 9))
			for i := range src {
				src[i] = byte(r.IntN(32))
			}
			for _, th := range []int{1, 2} {
				withThreads(t, th)
				checkArgSrc(t, splitInner(pl), src, isas, th == 2)
			}
		}
	}
}
