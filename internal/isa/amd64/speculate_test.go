package amd64

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNaNFreeCode checks which kernels are emitted as NaN-free code
// followed by exact code (speculate.go): AVX-512 max and min, rows,
// columns and 16-bit src, whose NaN-free part combines by VRANGEPS alone
// (no fix-up, no VMINPS/VMAXPS), compares f32 src vectors in pairs or,
// in plans read from memory on Zen, adds them into a watch sum, tests K0
// once, and is followed by the
// very kernel emitted without speculation; AVX2 max, whose NaN-free part
// combines by VMAXPS alone (no AND of both orders), compares src vectors
// in pairs (with Y11), checks its outputs for -0 and tests Y13 once; not AVX2 min, nor AVX2's max of
// 16-bit src (exact as words), not sums, not a plan whose binary operand is dst itself.
func TestNaNFreeCode(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	mk := func(alg plan.Alg, sdt dtypes.DataType, dims, ss []int64, red []bool, ds []int64, ops ...plan.PostOp) *plan.Plan {
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: alg.Reduction(0, 0), SrcDT: sdt, DstDT: f32, Dims: dims,
			SrcStrides: ss, Reduce: red, DstStrides: ds, PostOps: ops})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	rows := func(alg plan.Alg, sdt dtypes.DataType, ops ...plan.PostOp) *plan.Plan {
		return mk(alg, sdt, []int64{64, 1000}, []int64{1000, 1}, []bool{false, true}, []int64{1, 0}, ops...)
	}
	cols := func(alg plan.Alg, sdt dtypes.DataType) *plan.Plan {
		return mk(alg, sdt, []int64{300, 70}, []int64{70, 1}, []bool{true, false}, []int64{0, 1})
	}
	// An operand addressing dst's elements one for one may be dst itself.
	likeDst := plan.PostOp{Kind: ops.Add, BinDT: f32, BinStrides: []int64{1, 0}}
	scalar := plan.PostOp{Kind: ops.Add, BinDT: f32, BinStrides: []int64{0, 0}}
	avx512, avx2 := Options{AVX512: true}, Options{}
	avx512Zen := Options{AVX512: true, Zen: true}
	hints := map[*plan.Plan]kernelconf.Hints{}
	paced := func(pl *plan.Plan) *plan.Plan {
		h := hints[pl]
		h.FromMemory = true
		hints[pl] = h
		return pl
	}
	rowByRow := func(pl *plan.Plan) *plan.Plan {
		h := hints[pl]
		h.RowByRow = true
		hints[pl] = h
		return pl
	}
	cases := []struct {
		name string
		pl   *plan.Plan
		o    Options
		spec bool
	}{
		{"max rows", rows(plan.AlgMax, f32), avx512, true}, // f32 from memory: compared in pairs
		{"min rows", rows(plan.AlgMin, f32), avx512, true},
		{"max columns", cols(plan.AlgMax, f32), avx512, true},
		{"min columns bf16", cols(plan.AlgMin, bf16), avx512, true},
		{"max rows bf16", rows(plan.AlgMax, bf16), avx512, true},
		{"max rows, scalar operand", rows(plan.AlgMax, f32, scalar), avx512, true},
		{"max rows avx2", rows(plan.AlgMax, f32), avx2, true},
		{"max columns avx2", cols(plan.AlgMax, f32), avx2, true},
		{"max rows bf16 avx2", rows(plan.AlgMax, bf16), avx2, false}, // exact as words
		{"max columns bf16 avx2", cols(plan.AlgMax, bf16), avx2, false},
		{"min rows avx2", rows(plan.AlgMin, f32), avx2, false},
		{"max rows avx2, operand may be dst", rows(plan.AlgMax, f32, likeDst), avx2, false},
		{"max rows paced", paced(rows(plan.AlgMax, f32)), avx512Zen, true}, // checked by a watch sum
		{"min rows paced", paced(rows(plan.AlgMin, f32)), avx512Zen, true},
		{"max rows bf16 paced", paced(rows(plan.AlgMax, bf16)), avx512Zen, true}, // not paced: compared in pairs
		{"max columns paced", paced(cols(plan.AlgMax, f32)), avx512Zen, true},    // checked by a watch sum
		{"max row by row paced", paced(rowByRow(kind(rowByRowPlan(f32, 300, 96, 80), plan.Reduction{Combine: plan.CombineMax, Finalize: plan.FinalizeNone}))),
			avx512Zen, true}, // compared in pairs
		{"sum rows", rows(plan.AlgSum, f32), avx512, false},
		{"max rows, operand may be dst", rows(plan.AlgMax, f32, likeDst), avx512, false},
	}
	for _, c := range cases {
		if c.pl.HasDstOperand() != strings.Contains(c.name, "may be dst") {
			t.Fatalf("%s: HasDstOperand %v", c.name, c.pl.HasDstOperand())
		}
		h := hints[c.pl]
		code, err := EmitHinted(c.pl, h, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ins := disassemble(t, code.Text)
		g := newGenConf(newAsm(), c.pl, Choose(c.pl, h, c.o.Target()))
		kernelshape.Generate(c.pl, g)
		plain, err := g.Text()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		exact := disassemble(t, plain)
		test, testIns := -1, "kortestw %k0,%k0"
		if !c.o.AVX512 {
			testIns = "vptest %ymm13,%ymm13"
		}
		for i, in := range ins {
			if strings.HasPrefix(in, testIns) {
				if test >= 0 {
					t.Fatalf("%s: K0 tested twice", c.name)
				}
				test = i
			}
		}
		if !c.spec {
			if test >= 0 || len(ins) != len(exact) {
				t.Errorf("%s: speculated (K0 test at %d, %d instructions where the exact kernel has %d)", c.name, test, len(ins), len(exact))
			}
			continue
		}
		if test < 0 {
			t.Fatalf("%s: not speculated", c.name)
		}
		nanFree := strings.Join(ins[:test], "\n")
		want := []string{"jne", "vzeroupper", "ret", "kmovq  %k5,%rdi"}
		if !c.o.AVX512 {
			for _, w := range []string{"vmovq  %rdi,%xmm12", "vpxor  %ymm13,%ymm13,%ymm13", "vmaxps", "vcmpunordps", ",%ymm13,%ymm13", "vpcmpeqd"} {
				if !strings.Contains(nanFree, w) {
					t.Errorf("%s: NaN-free code has no %q:\n%s", c.name, w, nanFree)
				}
			}
			// f32 src vectors are compared in pairs with Y11; bf16 ones
			// come in pairs from one load (combinePair, rowPairs).
			if c.pl.SrcDT == f32 && !strings.Contains(nanFree, "%ymm11,") {
				t.Errorf("%s: f32 src vectors are not compared in pairs (with Y11):\n%s", c.name, nanFree)
			}
			for _, w := range []string{"vminps", "%xmm12,", "%ymm12,"} {
				if strings.Contains(nanFree, w) {
					t.Errorf("%s: NaN-free code has %q:\n%s", c.name, w, nanFree)
				}
			}
			// The exact max ORs its NaN lanes into the result; NaN-free
			// code ORs into Y13 only.
			for _, in := range ins[:test] {
				if strings.HasPrefix(in, "vpor") && !strings.HasSuffix(in, ",%ymm13,%ymm13") {
					t.Errorf("%s: NaN-free code has %q", c.name, in)
				}
			}
			want[3] = "vmovq  %xmm12,%rdi"
		}
		for _, w := range []string{"kmovq  %rdi,%k5", "kxorw  %k0,%k0,%k0", "vrangeps", "korw   %k4,%k0,%k0"} {
			if !c.o.AVX512 {
				break
			}
			if !strings.Contains(nanFree, w) {
				t.Errorf("%s: NaN-free code has no %q:\n%s", c.name, w, nanFree)
			}
		}
		// f32 plans read from memory on Zen add each src vector into the
		// watch sum Z30, tested once, but row by row; other f32 src vectors
		// are compared in pairs (with Z31).
		watched := c.o.AVX512 && c.pl.SrcDT == f32 && h.FromMemory && c.o.Zen && !h.RowByRow
		for w, want := range map[string]bool{
			",%zmm31,%k4":                   c.o.AVX512 && c.pl.SrcDT == f32 && !watched,
			"vpxord %zmm30,%zmm30,%zmm30":   watched,
			"vaddps %zmm31,%zmm30,%zmm30":   watched,
			"vcmpunordps %zmm30,%zmm30,%k4": watched,
		} {
			if strings.Contains(nanFree, w) != want {
				t.Errorf("%s: NaN-free code has %q: %v, want %v:\n%s", c.name, w, !want, want, nanFree)
			}
		}
		// Z30 is the watch sum's alone: no temporary may take it.
		for _, in := range ins[:test] {
			if watched && strings.Contains(in, "%zmm30") && !strings.Contains(in, "%zmm30,%zmm30") {
				t.Errorf("%s: NaN-free code uses the watch sum's Z30 in %q", c.name, in)
			}
		}
		if gs := emitSpeculating(c.pl, Choose(c.pl, h, c.o.Target())); watched && (gs == nil || !gs.watch || gs.tmpHi > rWatch) {
			t.Errorf("%s: the watch sum's Z30 is not kept from the temporaries", c.name)
		}
		// The NaN checks never touch the scratch opmasks (a check placed
		// at a branch would clobber a mask live across it).
		for _, w := range []string{"vpternlogd", "vminps", "vmaxps", "%k5,", "%k6,%k0", "%k7,%k0"} {
			if !c.o.AVX512 {
				break
			}
			if strings.Contains(nanFree, w) {
				t.Errorf("%s: NaN-free code has %q:\n%s", c.name, w, nanFree)
			}
		}
		rest := ins[test+1:]
		if len(rest) != len(want)+len(exact) {
			t.Fatalf("%s: %d instructions after the K0 test, want %d and the exact kernel's %d", c.name, len(rest), len(want), len(exact))
		}
		for i, w := range want {
			if !strings.HasPrefix(rest[i], w) {
				t.Errorf("%s: instruction %d after the K0 test is %q, want %q", c.name, i, rest[i], w)
			}
		}
		// The exact part, jump targets aside (they move with the code).
		for i, e := range exact {
			if got := rest[len(want)+i]; mnemonicOrWhole(got) != mnemonicOrWhole(e) {
				t.Fatalf("%s: exact part differs at %d: %q, want %q", c.name, i, got, e)
			}
		}
	}
}

// mnemonicOrWhole is a branch's mnemonic, or the whole instruction.
func mnemonicOrWhole(in string) string {
	if strings.HasPrefix(in, "j") {
		return strings.Fields(in)[0]
	}
	return in
}

// TestNaNFreeFallback puts one NaN at a time into many outputs' worth of
// max and min (f32 and bf16 src, f32 and bf16 dst, rows and columns,
// whole and in blocks; every element in turn into an f32 dst, every
// 7th in -short runs, since vectors are checked for NaN in pairs, two
// loads or the even and odd halves of one bf16 load): the NaN-free
// code has then written outputs before it finds the NaN, and the exact
// code must rewrite every one: the NaN's output NaN, every other output
// the exact one (+0 above -0). A third of the values are subnormal,
// which a bf16 store redoes under a mask that the NaN checks must leave
// alone. Plans read from memory on Zen (plan.FromMemory, Options.Zen)
// are run too, rows and columns, where AVX-512 checks f32 src by a
// watch sum, and data with +Inf and -Inf but no NaN, whose watch sum is
// NaN: the exact code then writes the same outputs.
func TestNaNFreeFallback(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	// Short runs (the AVX-512 stage, under Bochs on a CPU without
	// AVX-512, where this test took most of the emulator's time) put the
	// NaN at every 29th element: 29 is odd and prime to both dims, and
	// over 2,257 elements every column and every row still gets NaNs, at
	// both parities.
	positionStep := int64(1)
	if testing.Short() {
		positionStep = 29
	}
	// Each case's data and reference serve the kernels of every ISA,
	// paced (read from memory on Zen: f32 src checked by a watch sum) or
	// not.
	type kernel struct {
		name  string
		paced bool
		k     *kerneltest.Kernel
	}
	for _, alg := range []plan.Alg{plan.AlgMax, plan.AlgMin} {
		for _, dt := range [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.F32}, {dtypes.F32, dtypes.BF16}} {
			sdt, ddt := dt[0], dt[1]
			for _, colsFirst := range []bool{false, true} {
				p := twoD(alg.Reduction(0, 0), sdt, ddt, 37, 61, colsFirst)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				var ks []kernel
				for _, isa := range isas(t) {
					for _, paced := range []bool{false, true} {
						o, h := isa.o, kernelconf.Hints{}
						if paced {
							h.FromMemory, o.Zen = true, true
						}
						ks = append(ks, kernel{isa.name, paced, compileHinted(t, pl, h, o)})
					}
				}
				sb, _ := p.SrcBytes()
				n := sb / int64(sdt.Size())
				// -2: no NaN, but +Inf and -Inf, whose sum is NaN.
				ats := []int64{-1, -2, 0, n - 1, n / 2, r.Int63n(n)}
				if ddt == dtypes.F32 { // every place: first or second of a pair, even or odd in a bf16 pair load, tail, loop edges
					for at := int64(0); at < n; at += positionStep {
						ats = append(ats, at)
					}
				}
				for _, at := range ats {
					src := make([]byte, sb)
					for i := int64(0); i < n; i++ {
						v := float32(r.Intn(9) - 4)
						if v == 0 && r.Intn(2) == 0 {
							v = float32(math.Copysign(0, -1))
						}
						if r.Intn(3) == 0 {
							v *= 1e-39
						}
						dtypes.StoreF32(sdt, src, i, v)
					}
					if at >= 0 {
						dtypes.StoreF32(sdt, src, at, float32(math.NaN()))
					}
					if at == -2 {
						dtypes.StoreF32(sdt, src, r.Int63n(n/2), float32(math.Inf(1)))
						dtypes.StoreF32(sdt, src, n/2+r.Int63n(n/2), float32(math.Inf(-1)))
					}
					db, _ := p.DstBytes()
					dst0 := make([]byte, db)
					want, written := kerneltest.Reference(p, src, dst0, nil)
					for _, k := range ks {
						for _, blk := range []int64{0, 5} {
							got := append([]byte(nil), dst0...)
							k.k.RunBlocks(pl, src, got, nil, blk)
							if d := kerneltest.CompareExact(ddt, got, want, written, false); d != "" {
								t.Fatalf("%s %v %v -> %v columns %v paced %v, NaN at %d, blocks of %d: %s", k.name, alg, sdt, ddt, colsFirst, k.paced, at, blk, d)
							}
						}
					}
				}
				for _, k := range ks {
					k.k.Release()
				}
			}
		}
	}
}

// TestNaNFreeSignedZeros runs max and min over data with no NaN, whose
// outputs are mostly zeros of either sign (+0 and -0 in every order,
// among negative numbers): AVX2's NaN-free max would write -0 where +0
// is right unless its -0 checks send those calls to the exact code
// (speculate.go). Rows, columns and row-by-row partials, every ISA, f32
// and bf16 src, bit for bit with the reference.
func TestNaNFreeSignedZeros(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	negZero := float32(math.Copysign(0, -1))
	vals := []float32{0, negZero, negZero, -1, -0.5, -3}
	fill := func(sdt dtypes.DataType, n int64) []byte {
		src := make([]byte, n*int64(sdt.Size()))
		for i := range n {
			dtypes.StoreF32(sdt, src, i, vals[r.Intn(len(vals))])
		}
		return src
	}
	for _, isa := range isas(t) {
		for _, alg := range []plan.Alg{plan.AlgMax, plan.AlgMin} {
			for _, sdt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
				for _, shape := range [][2]int64{{3, 5}, {4, 37}, {9, 70}, {300, 17}} {
					for _, colsFirst := range []bool{false, true} {
						p := twoD(alg.Reduction(0, 0), sdt, dtypes.F32, shape[0], shape[1], colsFirst)
						pl, err := plan.Canonicalize(p)
						if err != nil {
							t.Fatal(err)
						}
						k := compile(t, pl, isa.o)
						for range 4 {
							src := fill(sdt, shape[0]*shape[1])
							db, _ := p.DstBytes()
							dst0 := make([]byte, db)
							want, written := kerneltest.Reference(p, src, dst0, nil)
							got := append([]byte(nil), dst0...)
							k.RunBlocks(pl, src, got, nil, 0)
							if d := kerneltest.CompareExact(dtypes.F32, got, want, written, false); d != "" {
								t.Fatalf("%s %v %v %v columns %v: %s", isa.name, alg, sdt, shape, colsFirst, d)
							}
						}
						k.Release()
					}
				}
				// Row by row: the partials are written without an epilogue.
				for _, w := range []int64{5, 8, 37} {
					rows := int64(6)
					pl := rowByRowPlan(sdt, rows, w, w)
					pl.Reduction = alg.Reduction(0, 0)
					k := compileHinted(t, pl, byRow, isa.o)
					for range 4 {
						src := fill(sdt, rows*w)
						want, written := make([]byte, w*4), map[int64]bool{}
						for i := range w {
							written[i] = true
							acc := pl.Reduction.Identity()
							for j := range rows {
								acc = float32(pl.Reduction.CombineF64(float64(acc), float64(dtypes.LoadF32(sdt, src, j*w+i))))
							}
							dtypes.StoreF32(dtypes.F32, want, i, acc)
						}
						got := make([]byte, w*4)
						k.RunBlocks(pl, src, got, nil, 0)
						if d := kerneltest.CompareExact(dtypes.F32, got, want, written, false); d != "" {
							t.Fatalf("%s %v %v row by row, width %d: %s", isa.name, alg, sdt, w, d)
						}
					}
					k.Release()
				}
			}
		}
	}
}

// TestNaNFreeCoverage: every max plan (and on AVX-512 every min plan) of
// rows and columns, whole vectors and tails, each src type, with and
// without |x| and x², gets NaN-free code, but AVX2's plain max of 16-bit
// src, exact as words (words.go); generation fails, and the
// kernel silently loses it, when the NaN-free code needs more
// temporaries than it has (AVX2: Y8-Y10).
func TestNaNFreeCoverage(t *testing.T) {
	for _, o := range []Options{{}, {AVX512: true}, {AVX512: true, BF16: true}, {Zen: true}, {AVX512: true, Zen: true}} {
		algs := []plan.Alg{plan.AlgMax}
		if o.AVX512 {
			algs = append(algs, plan.AlgMin)
		}
		for _, alg := range algs {
			for _, sdt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8} {
				for _, c := range [][2]int64{{300, 20}, {300, 70}, {300, 13}, {300, 3}, {300, 16}, {64, 1000}, {64, 17}, {64, 5}, {37, 61}} {
					for _, colsFirst := range []bool{false, true} {
						for _, tr := range []plan.Transform{plan.TransformNone, plan.TransformAbs, plan.TransformSquare} {
							red := alg.Reduction(0, 0)
							red.Transform = tr
							p := twoD(red, sdt, dtypes.F32, c[0], c[1], colsFirst)
							pl, err := plan.Canonicalize(p)
							if err != nil {
								t.Fatal(err)
							}
							h := kernelconf.Hints{FromMemory: o.Zen}
							if !o.AVX512 && wordsKind(pl.SrcDT, pl.Reduction) {
								// Exact as words; AVX2 does not speculate.
								if Choose(pl, h, o.Target()).NaNFree {
									t.Errorf("%+v %v of %v %v: AVX2 speculates on a plan taken as words", o, alg, sdt, c)
								}
								continue
							}
							if c := Choose(pl, h, o.Target()); !c.NaNFree || emitSpeculating(pl, c) == nil {
								t.Errorf("%+v %v %v of %v %v, columns %v: no NaN-free code", o, alg, tr, sdt, c, colsFirst)
							}
						}
					}
				}
			}
		}
	}
}

// twoD is the problem red over a dense [rows, cols] src of type sdt into
// ddt: over its rows (axis 1), or, with columns, over its columns (axis
// 0).
func twoD(red plan.Reduction, sdt, ddt dtypes.DataType, rows, cols int64, columns bool) *plan.Problem {
	p := &plan.Problem{Reduction: red, SrcDT: sdt, DstDT: ddt, Dims: []int64{rows, cols}, SrcStrides: []int64{cols, 1},
		Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
	if columns {
		p.Reduce, p.DstStrides = []bool{true, false}, []int64{0, 1}
	}
	return p
}
