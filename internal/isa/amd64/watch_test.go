package amd64

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// watchShape is a max or min problem for TestWatchSumAdversarial: rows of
// n f32 elements (pad elements apart more than n), outer rows or, with
// nested, an outer reduced loop too, which cuts each output's src into
// several row sweeps; or, with columns, the columns of [n, rows], which
// the gate of the watch sum (Conf.Watch) lets take it too.
type watchShape struct {
	rows, n, pad int64
	nested       bool
	columns      bool
}

func (s watchShape) problem(red plan.Reduction, ddt dtypes.DataType, post []plan.PostOp) *plan.Problem {
	w := s.n + s.pad
	p := &plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: ddt, PostOps: post}
	switch {
	case s.columns:
		p.Dims = []int64{s.n, s.rows}
		p.SrcStrides = []int64{s.rows + s.pad, 1}
		p.Reduce = []bool{true, false}
		p.DstStrides = []int64{0, 1}
	case s.nested:
		// [rows, 3, n] over axes 1 and 2: three row sweeps per output.
		p.Dims = []int64{s.rows, 3, s.n}
		p.SrcStrides = []int64{3 * w, w, 1}
		p.Reduce = []bool{false, true, true}
		p.DstStrides = []int64{1, 0, 0}
	default:
		p.Dims = []int64{s.rows, s.n}
		p.SrcStrides = []int64{w, 1}
		p.Reduce = []bool{false, true}
		p.DstStrides = []int64{1, 0}
	}
	for i := range p.PostOps {
		if p.PostOps[i].Kind.IsBinary() {
			// One operand value per output, or one for all.
			st := make([]int64, len(p.Dims))
			if i%2 == 0 {
				st[0] = 1
				if s.columns {
					st[0], st[1] = 0, 1
				}
			}
			p.PostOps[i].BinStrides = st
		}
	}
	return p
}

// f32Bits is the f32 with the given bits.
func f32Bits(b uint32) float32 { return math.Float32frombits(b) }

// watchNaNs are NaNs of both signs, quiet and signalling, with small,
// large and all-ones payloads.
var watchNaNs = []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fc00001, 0xffffffff, 0x7fa5a5a5}

// watchFill fills src's elements (rows of the shape) by pattern; at is a
// position for the patterns that place one special value.
func watchFill(r *rand.Rand, src []byte, pattern string, at int64) {
	n := int64(len(src) / 4)
	maxF := float32(math.MaxFloat32)
	finite := []float32{maxF, -maxF, maxF / 2, -maxF / 2, f32Bits(1), f32Bits(0x80000001), f32Bits(0x007fffff), f32Bits(0x807fffff),
		0, float32(math.Copysign(0, -1)), 1, -1, 3.5, -3.5, 1e30, -1e30}
	zero, negZero := float32(0), float32(math.Copysign(0, -1))
	for i := int64(0); i < n; i++ {
		var v float32
		switch pattern {
		case "huge+", "huge+ then -inf":
			v = maxF // every lane's sum overflows to +Inf
		case "huge-":
			v = -maxF
		case "zeros":
			v = [2]float32{zero, negZero}[r.Intn(2)]
		case "-0":
			v = negZero
		case "+inf":
			v = float32(math.Inf(1))
		case "-inf":
			v = float32(math.Inf(-1))
		default:
			v = finite[r.Intn(len(finite))]
		}
		dtypes.StoreF32(dtypes.F32, src, i, v)
	}
	put := func(i int64, v float32) { dtypes.StoreF32(dtypes.F32, src, i, v) }
	switch pattern {
	case "nan":
		put(at, f32Bits(watchNaNs[r.Intn(len(watchNaNs))]))
	case "nan in huge":
		for i := int64(0); i < n; i++ {
			put(i, maxF)
		}
		put(at, f32Bits(watchNaNs[r.Intn(len(watchNaNs))]))
	case "+inf at":
		put(at, float32(math.Inf(1)))
	case "-inf at":
		put(at, float32(math.Inf(-1)))
	case "both infs":
		put(at, float32(math.Inf(1)))
		put(r.Int63n(n), float32(math.Inf(-1)))
	case "huge+ then -inf":
		put(at, float32(math.Inf(-1)))
	case "nan and infs":
		put(r.Int63n(n), float32(math.Inf(1)))
		put(r.Int63n(n), float32(math.Inf(-1)))
		put(at, f32Bits(watchNaNs[r.Intn(len(watchNaNs))]))
	}
}

// TestWatchSumAdversarial runs AVX-512 max and min over f32 rows paced
// to memory, whose NaN-free code checks the src by a watch sum (Z30,
// rangeWatched) and sends a call whose sum is NaN to the exact code, on
// data built to fool a sum: one NaN of any sign, quietness and payload at
// every position of short rows (and at the vector edges of long ones),
// infinities of one sign or both, values near ±FLT_MAX whose sums
// overflow (and then meet -Inf), signed zeros, subnormals. Rows of every
// length 1 to 70 and long rows, padded and nested, and columns (whose
// kernels take the watch sum under the same gate), in one call, a call
// per row and in random blocks, f32, bf16 and f16 dst, with post-ops and
// binary operands. Each kernel is emitted paced and not, with and without
// Options.Zen and FromMemory (only both together pace), on every ISA:
// every result must equal the float64 reference and the interpreter bit
// for bit (NaN: any NaN), and the paced kernel's the unpaced kernel's of
// the same ISA bit for bit (NaN: any NaN, as doc.go says).
func TestWatchSumAdversarial(t *testing.T) {
	r := rand.New(rand.NewSource(30))
	var shapes []watchShape
	for n := int64(1); n <= 70; n++ {
		shapes = append(shapes, watchShape{rows: 3, n: n})
	}
	long := []int64{127, 128, 129, 1000, 4099}
	if !testing.Short() {
		long = append(long, 70001)
	}
	for _, n := range long {
		shapes = append(shapes, watchShape{rows: 2, n: n})
	}
	shapes = append(shapes, watchShape{rows: 4, n: 33, pad: 3}, watchShape{rows: 5, n: 17, nested: true},
		watchShape{rows: 2, n: 200, pad: 1, nested: true}, watchShape{rows: 40, n: 16})
	for _, c := range [][2]int64{{3, 1}, {16, 5}, {17, 16}, {33, 17}, {61, 37}, {16, 70}, {5, 1000}} {
		shapes = append(shapes, watchShape{rows: c[0], n: c[1], columns: true}, watchShape{rows: c[0], n: c[1], pad: 2, columns: true})
	}
	posts := [][]plan.PostOp{
		nil,
		{{Kind: ops.Add, BinDT: dtypes.F32}},
		{{Kind: ops.Maximum, BinDT: dtypes.BF16}, {Kind: ops.ReLU}},
		{{Kind: ops.Multiply, BinDT: dtypes.F32}, {Kind: ops.Clamp, Alpha: -2, Beta: 1e38}},
	}
	patterns := []string{"finite", "huge+", "huge-", "huge+ then -inf", "zeros", "-0", "+inf", "-inf",
		"nan", "nan in huge", "+inf at", "-inf at", "both infs", "nan and infs"}
	problems, runs := 0, 0
	for si, s := range shapes {
		for _, alg := range []plan.Alg{plan.AlgMax, plan.AlgMin} {
			ddt := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[si%3]
			post := posts[(si/3+int(alg))%len(posts)]
			p := s.problem(alg.Reduction(0, 0), ddt, post)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatalf("%+v: %v", s, err)
			}
			problems++
			type kern struct {
				name  string
				pl    *plan.Plan
				h     kernelconf.Hints
				o     Options
				paced bool
			}
			var ks []kern
			for _, isa := range isas(t) {
				for _, zm := range [][2]bool{{false, false}, {true, true}, {true, false}, {false, true}} {
					o := isa.o
					o.Zen = zm[0]
					ks = append(ks, kern{fmt.Sprintf("%s zen %v fromMemory %v", isa.name, zm[0], zm[1]), pl, kernelconf.Hints{FromMemory: zm[1]}, o, zm[0] && zm[1]})
				}
			}
			sb, _ := p.SrcBytes()
			n := sb / 4
			db, _ := p.DstBytes()
			var bins [][]byte
			for i, op := range p.PostOps {
				if op.Kind.IsBinary() {
					nb, _ := p.BinBytes(len(bins))
					b := make([]byte, nb)
					for j := int64(0); j < nb/int64(op.BinDT.Size()); j++ {
						v := float32(r.Intn(7) - 3)
						if i == 0 && r.Intn(9) == 0 {
							v = []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Copysign(0, -1))}[r.Intn(3)]
						}
						dtypes.StoreF32(op.BinDT, b, j, v)
					}
					bins = append(bins, b)
				}
			}
			// Where the single special values go: everywhere in small
			// src, the first and last elements, vector and row edges and
			// a few random places in larger ones.
			var ats []int64
			if n <= 256 {
				for at := range n {
					ats = append(ats, at)
				}
			} else {
				for _, a := range []int64{0, 1, 15, 16, 17, s.n - 17, s.n - 16, s.n - 15, s.n - 1, s.n, s.n + 16, n - 17, n - 16, n - 1} {
					if a >= 0 && a < n {
						ats = append(ats, a)
					}
				}
				for range 12 {
					ats = append(ats, r.Int63n(n))
				}
			}
			var cases []struct {
				pattern string
				at      int64
			}
			for _, pat := range patterns {
				switch pat {
				case "nan", "nan in huge", "+inf at", "-inf at", "both infs", "huge+ then -inf", "nan and infs":
					for _, at := range ats {
						if pat == "nan" || r.Intn(4) == 0 {
							cases = append(cases, struct {
								pattern string
								at      int64
							}{pat, at})
						}
					}
				default:
					cases = append(cases, struct {
						pattern string
						at      int64
					}{pat, 0})
				}
			}
			codes := make([]*kerneltest.Kernel, len(ks))
			for i, k := range ks {
				codes[i] = compileHinted(t, k.pl, k.h, k.o)
			}
			src := make([]byte, sb)
			dst0 := make([]byte, db)
			for i := range dst0 {
				dst0[i] = 0xA5
			}
			for _, c := range cases {
				watchFill(r, src, c.pattern, c.at)
				want, written := kerneltest.Reference(p, src, dst0, bins)
				viaInterp := append([]byte(nil), dst0...)
				if err := interp.Run(pl, src, viaInterp, bins); err != nil {
					t.Fatal(err)
				}
				what := func(name string, blk int64) string {
					return fmt.Sprintf("%s: %v of %+v f32 -> %v, post %v, %q at %d, blocks of %d", name, alg, s, ddt, post, c.pattern, c.at, blk)
				}
				if d := kerneltest.CompareExact(ddt, viaInterp, want, written, false); d != "" {
					t.Fatalf("%s: interpreter: %s", what("interp", 0), d)
				}
				blocks := []int64{0, 1}
				if s.rows > 2 {
					blocks = append(blocks, 1+r.Int63n(s.rows))
				}
				for _, blk := range blocks {
					var base []byte // this ISA's unpaced result
					for i, k := range ks {
						got := append([]byte(nil), dst0...)
						codes[i].RunBlocks(k.pl, src, got, bins, blk)
						runs++
						if d := kerneltest.CompareExact(ddt, got, want, written, false); d != "" {
							t.Fatalf("%s: reference: %s", what(k.name, blk), d)
						}
						if d := kerneltest.CompareExact(ddt, got, viaInterp, written, false); d != "" {
							t.Fatalf("%s: interpreter: %s", what(k.name, blk), d)
						}
						if i%4 == 0 {
							base = got
						} else if d := diffBits(ddt, got, base); d != "" {
							t.Fatalf("%s: against the unpaced kernel: %s", what(k.name, blk), d)
						}
					}
				}
			}
			for _, c := range codes {
				c.Release()
			}
		}
	}
	t.Logf("%d problems, %d kernel runs", problems, runs)
}

// diffBits describes the first element where a and b differ in any bit,
// but for NaN payloads, which the emitter does not pin down (doc.go).
func diffBits(dt dtypes.DataType, a, b []byte) string {
	for i := int64(0); i < int64(len(a)/dt.Size()); i++ {
		if !kerneltest.SameValue(dt, a, b, i, false) {
			return fmt.Sprintf("dst[%d] = %v, want %v", i, dtypes.LoadF32(dt, a, i), dtypes.LoadF32(dt, b, i))
		}
	}
	return ""
}
