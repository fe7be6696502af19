package jit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// TestLogSumExpWithOperands runs log-sum-exp followed by binary post-ops
// (the program's own max operand comes first, the caller's after it) on
// every ISA, with budgets that split each of its plans.
func TestLogSumExpWithOperands(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, s := range []spec{
		{dims: []int64{40, 300}, reduce: []bool{false, true}, binBcast: [][]bool{{false, false}, {true, false}}},
		{dims: []int64{300, 24}, reduce: []bool{true, false}, binBcast: [][]bool{{false, false}, {false, true}}},
		{dims: []int64{4, 200, 33}, reduce: []bool{false, true, false}, binBcast: [][]bool{{false, false, false}, {true, false, false}}},
	} {
		s.sdt, s.ddt, s.lo, s.hi = dtypes.F32, dtypes.F32, -30, 60
		s.post = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}, {Kind: ops.ReLU}, {Kind: ops.Multiply, BinDT: dtypes.BF16}}
		c := s.build(t, r)
		c.p.Reduction = plan.LogSumExp
		for _, isa := range testISAs() {
			for _, budget := range []int64{1 << 20, 1024} {
				withBudget(t, budget)
				prev := SetMaxISA(isa)
				dst := c.run(t)
				SetMaxISA(prev)
				checkRef(t, c, dst, "log-sum-exp with operands "+isa.String())
			}
		}
	}
}

// TestLogSumExpChunks checks the chunked log-sum-exp program: a plan
// larger than a call budget is one phase whose calls are its chunks (of
// its outermost loop, or tiles of Inner; a last chunk shorter than the
// others among them), each the program of
// the chunk alone on scratch buffers of its own, its calls moved to the
// chunk's own src, dst and operand elements (an operand per output, and
// one broadcast over the outputs); results agree with the reference on
// every ISA and the interpreter, the same for 1, 2 and 4 threads, and no
// phase of a chunk reads a buffer that it writes.
func TestLogSumExpChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	const budget = 4096
	for _, tc := range []struct {
		s      spec
		chunks []int64 // the sizes of the outermost loop's chunks
	}{
		// Outer [37], rows of 1200 bytes.
		{spec{dims: []int64{37, 300}, reduce: []bool{false, true}, binBcast: [][]bool{{false, true}, {true, true}}},
			[]int64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1}},
		// Outer [9], a strided Inner.
		{spec{dims: []int64{9, 20, 13}, reduce: []bool{false, true, false}, binBcast: [][]bool{{false, true, false}, {true, true, false}}},
			[]int64{3, 3, 3}},
		// Outer [5, 7]: chunks of the outer loop.
		{spec{dims: []int64{5, 7, 60}, reduce: []bool{false, false, true}, binBcast: [][]bool{{false, false, true}, {true, false, true}}},
			[]int64{2, 2, 1}},
		// No Outer loop: tiles of Inner [300], of 4096/(40*4) = 25.
		{spec{dims: []int64{40, 300}, reduce: []bool{true, false}, binBcast: [][]bool{{true, false}, {true, true}}},
			[]int64{25, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25}},
		// Inner [70] over 200 rows: tiles of minTile (16), not 5.
		{spec{dims: []int64{200, 70}, reduce: []bool{true, false}, binBcast: [][]bool{{true, false}, {true, true}}},
			[]int64{16, 16, 16, 16, 6}},
	} {
		s := tc.s
		s.sdt, s.ddt, s.lo, s.hi = dtypes.F32, dtypes.F32, -30, 60
		s.post = []plan.PostOp{{Kind: ops.Subtract, BinDT: dtypes.F32}, {Kind: ops.Multiply, BinDT: dtypes.BF16}}
		c := s.build(t, r)
		c.p.Reduction = plan.LogSumExp
		for _, isa := range testISAs() {
			withBudget(t, budget)
			what := fmt.Sprintf("%v %s", s.dims, isa)
			prev := SetMaxISA(isa)
			k := c.compile(t)
			SetMaxISA(prev)
			if len(k.dec.phases) != 1 || len(k.dec.phases[0].segs) != 1 || len(k.dec.scratch) != 0 {
				t.Fatalf("%s: %d phases, %d scratch buffers: want one phase of chunks and no scratch of its own", what, len(k.dec.phases), len(k.dec.scratch))
			}
			progs := k.dec.phases[0].segs[0].progs
			if len(progs) != len(tc.chunks) || k.dec.phases[0].tasks != int64(len(progs)) {
				t.Fatalf("%s: %d chunk programs in %d calls, want %d", what, len(progs), k.dec.phases[0].tasks, len(tc.chunks))
			}
			// Each chunk's program is that of the chunk alone, as one
			// thread runs it (its calls not cut for sharing).
			for i, n := range tc.chunks {
				sub := k.Plan().Clone()
				if len(sub.Outer) > 0 {
					sub.Outer[0].Size = n
				} else {
					sub.Inner.Size = n
				}
				counts(sub)
				dc := newDecomposer(isa)
				dc.inProgram = true
				if err := dc.add(sub, bufSrc, bufDst, 0); err != nil {
					t.Fatal(err)
				}
				d := &dc.d
				p := progs[i]
				if len(p.phases) != len(d.phases) || !slices.Equal(p.scratch, d.scratch) {
					t.Errorf("%s: chunk %d has %d phases and scratch %v, want %d and %v", what, i, len(p.phases), p.scratch, len(d.phases), d.scratch)
				}
				for j, ph := range p.phases {
					written := map[int]bool{}
					for _, s := range ph.segs {
						written[s.dstBuf] = true
					}
					for _, s := range ph.segs {
						for _, b := range append([]int{s.srcBuf}, s.bins[:s.nbins]...) {
							if written[b] {
								t.Errorf("%s: chunk %d phase %d reads buffer %d, which it writes", what, i, j, b)
							}
						}
					}
				}
			}
			var first []byte
			for _, threads := range []int{1, 2, 4} {
				withThreads(t, threads)
				dst := c.newDst()
				if err := k.Run(c.src, dst, c.bins); err != nil {
					t.Fatal(err)
				}
				checkRef(t, c, dst, what)
				if first == nil {
					first = dst
				} else if !bytes.Equal(first, dst) {
					t.Fatalf("%s: %d threads differ from 1", what, threads)
				}
			}
		}
	}
}

// TestLogSumExpChunkScratchIsLocal checks that a chunk's program numbers
// its scratch buffers from its own first (program runs them on buffers
// of its own), even where the decomposition has scratch buffers before
// the log-sum-exp's.
func TestLogSumExpChunkScratchIsLocal(t *testing.T) {
	withBudget(t, 4096)
	c := spec{dims: []int64{37, 300}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32}.build(t, rand.New(rand.NewPCG(67, 68)))
	c.p.Reduction = plan.LogSumExp
	pl, err := plan.Canonicalize(c.p)
	if err != nil {
		t.Fatal(err)
	}
	dc := newDecomposer(None)
	dc.d.scratch = []int64{64, 64, 64}
	if err := dc.logSumExp(pl, bufSrc, bufDst, 0); err != nil {
		t.Fatal(err)
	}
	if len(dc.d.scratch) != 3 || len(dc.d.phases) != 1 || dc.d.phases[0].segs[0].progs == nil {
		t.Fatalf("want one phase of chunks and the 3 scratch buffers before it, got %d phases and %v", len(dc.d.phases), dc.d.scratch)
	}
	for i, p := range dc.d.phases[0].segs[0].progs {
		for _, ph := range p.phases {
			if g := ph.guard; g != nil && g.sample && g.buf != bufSrc {
				t.Fatalf("chunk %d samples buffer %d, not src", i, g.buf)
			}
			if g := ph.guard; g != nil && !g.sample && g.buf != bufDst && (g.buf < bufScratch || g.buf-bufScratch >= len(p.scratch)) {
				t.Fatalf("chunk %d guards its shifted phases by buffer %d, neither dst nor a scratch buffer of its own", i, g.buf)
			}
			for _, s := range ph.segs {
				for _, b := range append([]int{s.srcBuf, s.dstBuf}, s.bins[:s.nbins]...) {
					if b >= bufScratch && b < bufBins && b-bufScratch >= len(p.scratch) {
						t.Fatalf("chunk %d reads or writes scratch buffer %d, it has %d", i, b-bufScratch, len(p.scratch))
					}
				}
			}
		}
	}
}

// TestLogSumExpScratchBound checks the refusal of a log-sum-exp whose
// one program would need a Y past maxScratchBytes: a full reduction of
// 2^30 elements (described by stride-0 dims, not stored) cannot be
// chunked, and Compile returns OutOfMemory instead of asking for 4 GiB.
// The same elements over an axis kept in chunks compile.
func TestLogSumExpScratchBound(t *testing.T) {
	requireJIT(t)
	for _, tc := range []struct {
		reduce []bool
		ok     bool
	}{{[]bool{true, true}, false}, {[]bool{false, true}, true}} {
		dst := []int64{0, 0}
		if !tc.reduce[0] {
			dst[0] = 1
		}
		p := &plan.Problem{Reduction: plan.LogSumExp, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{1 << 15, 1 << 15},
			SrcStrides: []int64{0, 0}, Reduce: tc.reduce, DstStrides: dst}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compile(pl)
		switch {
		case tc.ok && err != nil:
			t.Errorf("reduce %v: %v", tc.reduce, err)
		case !tc.ok && !errors.Is(err, status.OutOfMemory):
			t.Errorf("reduce %v: got %v, want OutOfMemory", tc.reduce, err)
		}
	}
}

// TestLogSumExpShiftsWhereNeeded runs log-sum-exp over rows that the
// unshifted pass gets right (elements in [-3, 3]) and rows it does not:
// an element whose exp overflows, a row whose exps all underflow, +Inf,
// a row of -Inf; and a NaN, which the unshifted pass gets right too; with
// an operand after it, and straight into a dst with gaps. In chunks of
// one row, exactly the chunks of the rows it gets wrong run the shifted
// phases (the interpreter's float64 sums may not overflow), and those
// whose first element is out of bounds skip the unshifted pass; in one
// program, the shifted phases run once, after no unshifted pass. Results
// agree with the reference on every ISA and the interpreter, the same
// for 1, 2 and 4 threads.
func TestLogSumExpShiftsWhereNeeded(t *testing.T) {
	const cols = 300
	// With an operand, the results go to scratch and a copy into dst;
	// without post-ops, straight into dst, here one with gaps.
	specs := []spec{
		{dims: []int64{12, cols}, reduce: []bool{false, true}, ddt: dtypes.F32, lo: -3, hi: 3,
			binBcast: [][]bool{{false, true}}, post: []plan.PostOp{{Kind: ops.Subtract, BinDT: dtypes.F32}}},
		{dims: []int64{12, cols}, reduce: []bool{false, true}, ddt: dtypes.F32, lo: -3, hi: 3, dpad: 2},
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	rows := map[int64]func(j int64, x float32) float32{
		2: func(j int64, x float32) float32 { return map[bool]float32{true: 95, false: x}[j == 7] }, // exp overflows
		// A sum below UnshiftedFloor (log(300) - 95 ln 2, about -60)
		// whose first element passes the sample (-65 > sampleLo) and
		// whose others are below the exp for sums' range (AVX2 and NEON
		// clamp them to e^-87).
		3: func(j int64, x float32) float32 {
			return map[bool]float32{true: -65, false: map[bool]float32{true: -inf, false: x - 100}[j%2 == 1]}[j == 0]
		},
		4:  func(_ int64, x float32) float32 { return x - 70 },  // below sampleLo, above -87
		5:  func(_ int64, x float32) float32 { return x - 200 }, // every exp underflows
		7:  func(j int64, x float32) float32 { return map[bool]float32{true: inf, false: x}[j == 0] },
		9:  func(j int64, x float32) float32 { return map[bool]float32{true: nan, false: x}[j == cols-1] },
		10: func(int64, float32) float32 { return -inf },
	}
	const shifting = 6 // rows 2, 3, 4, 5, 7 and 10
	const sampling = 4 // rows 4, 5, 7 and 10, whose first element is out of bounds: no unshifted pass
	for i := range 4 {
		s, sdt := specs[i%2], []dtypes.DataType{dtypes.F32, dtypes.BF16}[i/2]
		s.sdt = sdt
		c := s.build(t, rand.New(rand.NewPCG(69, 70)))
		c.p.Reduction = plan.LogSumExp
		for row, f := range rows {
			for j := int64(0); j < cols; j++ {
				i := row*cols + j
				dtypes.StoreF32(sdt, c.src, i, f(j, float32(oracle.Get(sdt, c.src, i))))
			}
		}
		for _, isa := range testISAs() {
			for _, tc := range []struct {
				budget          int64
				shifts, sampled int64
			}{{1 << 20, 1, 1}, {1024, shifting, sampling}} {
				withBudget(t, tc.budget)
				what := fmt.Sprintf("%v %d post-ops %s budget %d", sdt, len(s.post), isa, tc.budget)
				prev := SetMaxISA(isa)
				k := c.compile(t)
				SetMaxISA(prev)
				var first []byte
				for _, threads := range []int{1, 2, 4} {
					withThreads(t, threads)
					dst := c.newDst()
					before, sampledBefore := lseShifts.Load(), lseSampled.Load()
					if err := k.Run(c.src, dst, c.bins); err != nil {
						t.Fatal(err)
					}
					if n := lseSampled.Load() - sampledBefore; n != tc.sampled {
						t.Errorf("%s, %d threads: %d programs skipped the unshifted pass, want %d", what, threads, n, tc.sampled)
					}
					// The interpreter's unshifted sums are float64 where
					// they are not stored as partials: exp(95) stays finite.
					n := lseShifts.Load() - before
					if n != tc.shifts && !(isa == None && n == tc.shifts-1) {
						t.Errorf("%s, %d threads: %d programs ran their shifted phases, want %d", what, threads, n, tc.shifts)
					}
					checkRef(t, c, dst, what)
					if first == nil {
						first = dst
					} else if !bytes.Equal(first, dst) {
						t.Fatalf("%s: %d threads differ from 1", what, threads)
					}
				}
			}
		}
	}
}

// TestLogSumExpOfOne: a log-sum-exp over one element (a reduced dim of
// size 1, or no axes) is the element itself, bit for bit, on every ISA:
// finite values, ±Inf and NaN, with f32 and 16-bit src; -0 gives +0, as
// the shifted form's log(1) + -0 does.
func TestLogSumExpOfOne(t *testing.T) {
	vals := []float32{7.5, -3.25, 0, float32(math.Copysign(0, -1)), 88.9, -104, 1e30, -1e30, 3e-40,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	forEachISA(t, func(t *testing.T) {
		for _, dt := range floatTypes {
			n := int64(len(vals))
			src := make([]byte, n*esz(dt))
			for i, v := range vals {
				dtypes.StoreF32(dt, src, int64(i), v)
			}
			c := &tcase{p: &plan.Problem{Reduction: plan.LogSumExp, SrcDT: dt, DstDT: dt, Dims: []int64{n, 1},
				SrcStrides: []int64{1, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}},
				src: src, dstN: n * esz(dt)}
			got := c.run(t)
			for i := range vals {
				s, d := src[int64(i)*esz(dt):int64(i+1)*esz(dt)], got[int64(i)*esz(dt):int64(i+1)*esz(dt)]
				if vals[i] == 0 {
					s = make([]byte, esz(dt)) // +0
				}
				if !bytes.Equal(s, d) {
					t.Errorf("%v: log-sum-exp of one %v is %x, want %x", dt, vals[i], d, s)
				}
			}
		}
	})
}

// TestLogSumExpOfZeroAndNegInf: a log-sum-exp whose only finite term is
// 0 (a masked attention row: 0 where it attends, -Inf elsewhere) is
// exactly +0 on every ISA, which needs e^0 exactly 1 in the exp that
// sums it. Rows that start with 0 run the unshifted pass (the exp for
// sums); those that start with -Inf skip it (the sample guard) and run
// the shifted phases (the Exp post-op's exp of x - max). The 0 comes
// first, in the middle or last, in rows of 1 to 300 elements (so in a
// vector's first lane, a tail lane and the scalar path) and, reduced
// over the outer axis, in every lane across 19 columns; budgets split
// the long rows into partial sums.
func TestLogSumExpOfZeroAndNegInf(t *testing.T) {
	ninf := float32(math.Inf(-1))
	at := map[string]func(n int64) int64{
		"first":  func(int64) int64 { return 0 },
		"middle": func(n int64) int64 { return n / 2 },
		"last":   func(n int64) int64 { return n - 1 },
	}
	var ran []string
	forEachISA(t, func(t *testing.T) {
		ran = append(ran, EffectiveISA().String())
		for name, zero := range at {
			for _, n := range []int64{1, 2, 3, 7, 16, 17, 37, 300} {
				for _, filler := range []float32{ninf, -200} {
					for _, dt := range floatTypes {
						for _, columns := range []bool{false, true} {
							// Rows [3, n] reduced over n, or columns [n, 19]
							// reduced over n.
							dims, strides, reduce, dstStrides := []int64{3, n}, []int64{n, 1}, []bool{false, true}, []int64{1, 0}
							if columns {
								dims, strides, reduce, dstStrides = []int64{n, 19}, []int64{19, 1}, []bool{true, false}, []int64{0, 1}
							}
							outs := dims[0] * dims[1] / n
							src := make([]byte, dims[0]*dims[1]*esz(dt))
							for i := range dims[0] * dims[1] {
								j := i % n // the element's index along the reduced axis
								if columns {
									j = i / 19
								}
								dtypes.StoreF32(dt, src, i, map[bool]float32{true: 0, false: filler}[j == zero(n)])
							}
							c := &tcase{p: &plan.Problem{Reduction: plan.LogSumExp, SrcDT: dt, DstDT: dtypes.F32, Dims: dims,
								SrcStrides: strides, Reduce: reduce, DstStrides: dstStrides}, src: src, dstN: outs * 4}
							for _, budget := range []int64{1 << 20, 256} {
								withBudget(t, budget)
								what := fmt.Sprintf("%v over %d (0 %s, the rest %v, columns %v, budget %d)", dt, n, name, filler, columns, budget)
								sampled := lseSampled.Load()
								got := c.run(t)
								if skipped := lseSampled.Load() != sampled; skipped != (zero(n) != 0) {
									t.Errorf("%s: unshifted pass skipped %v, want %v", what, skipped, zero(n) != 0)
								}
								for i := range outs {
									if b := binary.LittleEndian.Uint32(got[4*i:]); b != 0 {
										t.Errorf("%s: output %d is %v (bits %#x), want +0", what, i, math.Float32frombits(b), b)
										break
									}
								}
							}
						}
					}
				}
			}
		}
	})
	t.Logf("ran on %v", ran)
}
