package amd64

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// evexReg matches the vector registers only EVEX can encode.
var evexReg = regexp.MustCompile(`mm(1[6-9]|2[0-9]|3[01])\b`)

// disassemble runs binutils objdump over code and returns the
// instruction mnemonics with their operands, one per instruction.
func disassemble(t *testing.T, code []byte) []string {
	t.Helper()
	var ins []string
	for _, parts := range kerneltest.Objdump(t, "objdump", "apt-get install binutils", "i386:x86-64", code) {
		ins = append(ins, strings.TrimSpace(strings.Join(parts[2:], " ")))
	}
	return ins
}

// TestDisassembly checks emitted kernels with an independent decoder:
// every byte decodes to a known instruction, the key instructions of each
// shape are there, AVX2 code has no EVEX (zmm, opmask) instruction, and
// the kernel ends in VZEROUPPER; RET.
func TestDisassembly(t *testing.T) {
	mk := kerneltest.PlanMaker(t)
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	cases := []struct {
		name string
		pl   *plan.Plan
		o    Options
		want []string
	}{
		{"row grouped avx512", mk(f32, f32, []int64{72, 40}, []int64{40, 1}, []bool{false, true}, []int64{1, 0}),
			Options{AVX512: true}, []string{"vaddps", "vshuff32x4", "vshufps", "vdivps", "vmovups"}},
		{"row long avx2 bf16", mk(bf16, bf16, []int64{4, 1000}, []int64{1000, 1}, []bool{false, true}, []int64{1, 0}),
			Options{}, []string{"vpmovzxwd", "vpslld", "vperm2f128", "vpackusdw", "vpextrw"}},
		{"column f16 avx512 native bf16 off", mk(f16, f16, []int64{64, 100}, []int64{100, 1}, []bool{true, false}, []int64{0, 1},
			plan.PostOp{Kind: ops.Maximum, BinDT: f32, BinStrides: []int64{0, 1}}),
			Options{AVX512: true}, []string{"vcvtph2ps", "vcvtps2ph", "vcmpunordps", "vrangeps", "vpternlogd", "%k"}},
		{"column bf16 native", mk(bf16, bf16, []int64{8, 40}, []int64{40, 1}, []bool{true, false}, []int64{0, 1}),
			Options{AVX512: true, BF16: true}, []string{"vcvtneps2bf16", "vfpclassps", "vmovdqu16"}},
		{"column pairs avx2 bf16", mk(bf16, f32, []int64{64, 40}, []int64{40, 1}, []bool{true, false}, []int64{0, 1}),
			Options{}, []string{"vpand", "vfmadd231ps", "vunpcklps", "vunpckhps", "vperm2f128"}},
		{"row words avx2 bf16 min", kind(mk(bf16, bf16, []int64{4, 1000}, []int64{1000, 1}, []bool{false, true}, []int64{1, 0}), plan.AlgMin.Reduction(0, 0)),
			Options{}, []string{"vpminuw", "vpmaxuw", "vpmaxsw", "vpsraw $0xf", "vpblendvb", "vpcmpgtw"}},
		{"row words avx512 f16 max", kind(mk(f16, f32, []int64{4, 1000}, []int64{1000, 1}, []bool{false, true}, []int64{1, 0}), plan.AlgMax.Reduction(0, 0)),
			Options{AVX512: true}, []string{"vpminuw", "vpmaxuw", "vpmaxsw", "vpmovw2m", "vpcmpnleuw", "vextracti32x8", "vcvtph2ps"}},
		{"row pairs avx512 bf16", mk(bf16, f32, []int64{2, 4096}, []int64{4096, 1}, []bool{false, true}, []int64{1, 0}),
			Options{AVX512: true}, []string{"vpandd", "vfmadd231ps"}},
		{"column L1 avx512 f32 (abs from memory)", kind(mk(f32, f32, []int64{64, 40}, []int64{40, 1}, []bool{true, false}, []int64{0, 1}),
			plan.AlgNormLpSum.Reduction(1, 0)), Options{AVX512: true}, []string{"vpandd (%rsi),%zmm", "vpandd 0x40(%rsi),%zmm"}},
		{"flat column avx2 f32", mk(f32, f32, []int64{100, 3}, []int64{3, 1}, []bool{true, false}, []int64{0, 1}),
			Options{}, []string{"vmaskmovps", "vpermps"}},
		{"element avx2", mk(f32, f32, []int64{5, 9}, []int64{18, 2}, []bool{false, true}, []int64{1, 0},
			plan.PostOp{Kind: ops.Round}), Options{}, []string{"vbroadcastss", "vroundps"}},
		{"exp avx512", mk(f32, f32, []int64{40}, []int64{1}, []bool{false}, []int64{1}, plan.PostOp{Kind: ops.Exp}),
			Options{AVX512: true}, []string{"vminps (%rax),%zmm0", "vrndscaleps $0x0", "vfmadd231ps 0xc0(%rax)", "vfmadd213ps 0x140(%rax)",
				"vscalefps %zmm17,%zmm18,%zmm0", "vcmpunordps %zmm", "vmovaps %zmm16,%zmm0{%k6}"}},
		{"exp avx2", mk(f32, f32, []int64{40}, []int64{1}, []bool{false}, []int64{1}, plan.PostOp{Kind: ops.Exp}),
			Options{}, []string{"vminps (%rax),%ymm0", "vroundps $0x0", "vfmadd231ps 0xc0(%rax)", "vfmadd213ps 0x140(%rax)", "vcvtps2dq",
				"vpsrad $0x1", "vpslld $0x17", "vpaddd 0x140(%rax)", "vcmpunordps %ymm", "vblendvps"}},
		{"log avx512", mk(f32, f32, []int64{40}, []int64{1}, []bool{false}, []int64{1}, plan.PostOp{Kind: ops.Log}),
			Options{AVX512: true}, []string{"vgetexpps %zmm0,%zmm17", "vgetmantps $0x0,%zmm0,%zmm0", "vcmpge_oqps 0xc0(%rax),%zmm0,%k6",
				"vmulps 0x100(%rax),%zmm0,%zmm0{%k6}", "vaddps (%rax),%zmm17,%zmm17{%k6}", "vfmadd213ps 0x3c0(%rax)",
				"vfmadd231ps 0x80(%rax),%zmm17,%zmm0", "vfixupimmps $0x0,0x140(%rax),%zmm16,%zmm0"}},
		{"log avx2", mk(f32, f32, []int64{40}, []int64{1}, []bool{false}, []int64{1}, plan.PostOp{Kind: ops.Log}),
			Options{}, []string{"vcmpltps 0x180(%rax),%ymm0", "vblendvps %ymm10,%ymm9,%ymm0,%ymm0", "vandps 0x200(%rax)",
				"vpsubd 0x240(%rax)", "vpsrad $0x17", "vcvtdq2ps", "vpaddd 0x240(%rax)", "vfmadd213ps 0x3c0(%rax)", "vcmpleps 0x2c0(%rax)",
				"vblendvps %ymm10,0x300(%rax)", "vcmpnleps 0x380(%rax)"}},
	}
	for _, c := range cases {
		code, err := Emit(c.pl, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ins := disassemble(t, code.Text)
		if len(ins) < 3 {
			t.Fatalf("%s: %d instructions decoded", c.name, len(ins))
		}
		text := strings.Join(ins, "\n")
		for _, i := range ins {
			if strings.Contains(i, "(bad)") || strings.HasPrefix(i, ".byte") {
				t.Errorf("%s: undecodable bytes: %q", c.name, i)
			}
			if !c.o.AVX512 && (strings.Contains(i, "zmm") || strings.Contains(i, "%k") || evexReg.MatchString(i)) {
				t.Errorf("%s: AVX2 kernel uses an AVX-512 instruction: %q", c.name, i)
			}
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, text)
			}
		}
		if n := len(ins); ins[n-2] != "vzeroupper" || !strings.HasPrefix(ins[n-1], "ret") {
			t.Errorf("%s: kernel ends with %q, %q", c.name, ins[n-2], ins[n-1])
		}
	}
}

// TestPrefetchChoice checks that the prefetch Choose decides is emitted
// (TestChoose has the choices without emitting): groups of
// rows shorter than a line (any ISA, under at most 4 outer reduced
// iterations), column kernels whose kept iterations are less than a line
// apart, 16-bit column blocks of AVX2 with rows at most pfMaxStride bytes
// apart, narrow 16-bit column blocks of AVX-512, and 16-bit rows summed
// one output at a time when a call reads at least minPrefetchedCall
// bytes, and f32 column blocks of kinds other than sums and products over
// rows a page or more apart (busyBlock); not long f32 rows,
// not f32 columns of sums, not AVX2 rows 8 KiB apart.
func TestPrefetchChoice(t *testing.T) {
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	avx512, avx2 := Options{AVX512: true}, Options{}
	zen512, zen2 := Options{AVX512: true, Zen: true}, Options{Zen: true}
	rows := func(dt dtypes.DataType, n, rk int64) *plan.Plan {
		return kerneltest.DensePlan(t, dt, []int64{n, rk}, []int64{rk, 1}, []bool{false, true}, plan.Reduction{})
	}
	cols := func(dt dtypes.DataType, r, stride, w int64) *plan.Plan {
		return kerneltest.DensePlan(t, dt, []int64{r, w}, []int64{stride, 1}, []bool{true, false}, plan.Reduction{})
	}
	cases := []struct {
		name string
		pl   *plan.Plan
		o    Options
		want bool
	}{
		{"rows of 5 f32, avx512", rows(f32, 4096, 5), avx512, true},
		{"rows of 3 f32, avx2", rows(f32, 4096, 3), avx2, true},
		{"rows of 15 f32, avx512", rows(f32, 4096, 15), avx512, true},
		{"rows of 5 bf16, avx512", rows(bf16, 4096, 5), avx512, true},
		{"rows of 3 f32, avx512 (gather3)", rows(f32, 4096, 3), avx512, false},
		{"rows of 16 f32, avx512", rows(f32, 4096, 16), avx512, false},
		{"rows of 3000 f32, avx512", rows(f32, 64, 3000), avx512, false},
		{"one row of 1M f32, avx512", rows(f32, 1, 1<<20), avx512, false},
		{"one row of 256K bf16 (512 KiB), avx512", rows(bf16, 1, 256<<10), avx512, true},
		{"one row of 256K bf16, avx2", rows(bf16, 1, 256<<10), avx2, true},
		{"rows of 4096 f16 (1 MiB), avx512", rows(f16, 128, 4096), avx512, true},
		{"rows of 4096 f16 (1 MiB), avx2", rows(f16, 128, 4096), avx2, true},
		{"rows of 1024 bf16 (128 KiB, in L2), avx512", rows(bf16, 64, 1024), avx512, false},
		{"one row of 256K bf16, avx512, zen", rows(bf16, 1, 256<<10), zen512, false},
		{"rows of 4096 f16 (1 MiB), avx2, zen", rows(f16, 128, 4096), zen2, false},
		{"rows of 5 f32, avx512, zen (groups)", rows(f32, 4096, 5), zen512, true},
		{"bf16 columns 256 B wide, avx512, zen", cols(bf16, 512, 4096, 128), zen512, true},
		{"one row of 256K-1 bf16, avx512", rows(bf16, 1, 256<<10-1), avx512, false},
		{"rows of 2 under 2 far rows, avx512", kerneltest.DensePlan(t, f32, []int64{2, 4096, 2}, []int64{8192, 2, 1}, []bool{true, false, true}, plan.Reduction{}), avx512, true},
		{"rows of 2 under 64 far rows, avx512", kerneltest.DensePlan(t, f32, []int64{64, 4096, 2}, []int64{8192, 2, 1}, []bool{true, false, true}, plan.Reduction{}), avx512, false},
		{"columns 2x2 per output row, avx512", kerneltest.DensePlan(t, f32, []int64{4096, 2, 2}, []int64{4, 2, 1}, []bool{false, true, false}, plan.Reduction{}), avx512, true},
		{"columns 2x2 per output row, avx2", kerneltest.DensePlan(t, f32, []int64{4096, 2, 2}, []int64{4, 2, 1}, []bool{false, true, false}, plan.Reduction{}), avx2, true},
		{"columns 4x4 per output row, avx512", kerneltest.DensePlan(t, f32, []int64{4096, 4, 4}, []int64{16, 4, 1}, []bool{false, true, false}, plan.Reduction{}), avx512, false},
		{"bf16 columns 512 B apart, avx2", cols(bf16, 3136, 256, 64), avx2, true},
		{"f16 columns 4 KiB apart, avx2", cols(f16, 512, 2048, 64), avx2, true},
		{"bf16 columns 8 KiB apart, avx2", cols(bf16, 512, 4096, 64), avx2, false},
		{"f32 columns 1 KiB apart, avx2", cols(f32, 512, 256, 64), avx2, false},
		{"bf16 columns 256 B wide, avx512", cols(bf16, 512, 4096, 128), avx512, true},
		{"bf16 columns 512 B wide, avx512", cols(bf16, 512, 4096, 256), avx512, false},
		{"flat columns of 5 bf16, avx512", cols(bf16, 4096, 5, 5), avx512, true},
		{"flat columns of 3 f32, avx2", cols(f32, 4096, 3, 3), avx2, true},
		{"flat columns of 3 f16, avx2 (exact-size moves)", cols(f16, 4096, 3, 3), avx2, false},
		{"flat columns of 4 f32, avx512 (full loads)", cols(f32, 4096, 4, 4), avx512, false},
		{"flat columns of 8 bf16, avx512 (full loads)", cols(bf16, 4096, 8, 8), avx512, false},
		{"masked columns of 12 bf16, avx512", cols(bf16, 4096, 12, 12), avx512, true},
		{"masked columns of 9 f32, avx512", cols(f32, 4096, 9, 9), avx512, true},
		{"masked columns of 6 f32, avx2", cols(f32, 4096, 6, 6), avx2, true},
		{"masked columns of 6 bf16, avx2 (exact-size moves)", cols(bf16, 4096, 6, 6), avx2, false},
		{"masked columns of 15 f32 a line apart, avx512 (followed by hardware)", cols(f32, 4096, 16, 15), avx512, false},
		{"columns of 16 f32, avx512 (full loads)", cols(f32, 4096, 16, 16), avx512, false},
		{"f32 L1 columns 16 KiB apart, avx512", kind(cols(f32, 512, 4096, 256), plan.AlgNormLpSum.Reduction(1, 0)), avx512, true},
		{"f32 L2 columns 4 KiB apart, avx512", kind(cols(f32, 512, 1024, 256), plan.AlgNormLpSum.Reduction(2, 0)), avx512, true},
		{"f32 max columns 16 KiB apart, avx512", kind(cols(f32, 512, 4096, 256), plan.AlgMax.Reduction(0, 0)), avx512, true},
		{"f32 min columns 16 KiB apart, avx512", kind(cols(f32, 512, 4096, 256), plan.AlgMin.Reduction(0, 0)), avx512, true},
		{"f32 max columns 2 KiB apart, avx512", kind(cols(f32, 512, 512, 256), plan.AlgMax.Reduction(0, 0)), avx512, false},
		{"f32 product columns 16 KiB apart, avx512", kind(cols(f32, 512, 4096, 256), plan.AlgMul.Reduction(0, 0)), avx512, false},
		{"f32 sum columns 16 KiB apart, avx512", kind(cols(f32, 512, 4096, 256), plan.AlgSum.Reduction(0, 0)), avx512, false},
		{"f32 L1 columns 16 KiB apart, avx2", kind(cols(f32, 512, 4096, 64), plan.AlgNormLpSum.Reduction(1, 0)), avx2, true},
		{"f32 max columns 4 KiB apart, avx2", kind(cols(f32, 512, 1024, 64), plan.AlgMax.Reduction(0, 0)), avx2, true},
		{"f32 min columns 2 KiB apart, avx2", kind(cols(f32, 512, 512, 64), plan.AlgMin.Reduction(0, 0)), avx2, false},
		{"f32 sum columns 16 KiB apart, avx2", kind(cols(f32, 512, 4096, 64), plan.AlgSum.Reduction(0, 0)), avx2, false},
		{"bf16 max columns 16 KiB apart, avx512 (wide 16-bit blocks)", kind(cols(bf16, 512, 8192, 512), plan.AlgMax.Reduction(0, 0)), avx512, false},
	}
	for _, c := range cases {
		code, err := Emit(c.pl, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := strings.Contains(strings.Join(disassemble(t, code.Text), "\n"), "prefetcht0")
		if got != c.want {
			t.Errorf("%s (%v): prefetch emitted = %v, want %v", c.name, c.pl, got, c.want)
		}
	}
}

// kind returns pl with its reduction set to r.
func kind(pl *plan.Plan, r plan.Reduction) *plan.Plan {
	pl.Reduction = r
	return pl
}

// TestVCVTNEPS2BF16Encoding checks the hand-made EVEX encoding of the one
// instruction the assembler lacks, for registers in every bank (0-7,
// 8-15, 16-31 need different EVEX extension bits).
func TestVCVTNEPS2BF16Encoding(t *testing.T) {
	pairs := [][2]int{{0, 0}, {7, 15}, {8, 16}, {16, 31}, {31, 8}, {23, 1}}
	g := newGen(&plan.Plan{SrcDT: dtypes.BF16, DstDT: dtypes.BF16}, Options{AVX512: true, BF16: true})
	for _, p := range pairs {
		g.vcvtneps2bf16(p[0], p[1])
	}
	g.Return()
	code, err := g.Text()
	if err != nil {
		t.Fatal(err)
	}
	ins := disassemble(t, code)
	if len(ins) != len(pairs)+2 {
		t.Fatalf("decoded %d instructions, want %d:\n%s", len(ins), len(pairs)+2, strings.Join(ins, "\n"))
	}
	for i, p := range pairs {
		want := fmt.Sprintf("vcvtneps2bf16 %%zmm%d,%%ymm%d", p[1], p[0])
		if strings.Join(strings.Fields(ins[i]), " ") != want {
			t.Errorf("pair %v: decoded %q, want %q", p, ins[i], want)
		}
	}
}

// TestVCVTNE2PS2BF16Encoding decodes the hand-encoded two-source
// conversion for registers that set each EVEX extension bit of each
// operand.
func TestVCVTNE2PS2BF16Encoding(t *testing.T) {
	ops := [][3]int{{0, 0, 0}, {7, 15, 8}, {8, 16, 31}, {16, 31, 7}, {31, 8, 16}, {23, 1, 24}, {2, 24, 17}}
	g := newGen(&plan.Plan{SrcDT: dtypes.BF16, DstDT: dtypes.BF16}, Options{AVX512: true, BF16: true})
	for _, o := range ops {
		g.vcvtne2ps2bf16(o[0], o[1], o[2])
	}
	g.Return()
	code, err := g.Text()
	if err != nil {
		t.Fatal(err)
	}
	ins := disassemble(t, code)
	if len(ins) != len(ops)+2 {
		t.Fatalf("decoded %d instructions, want %d:\n%s", len(ins), len(ops)+2, strings.Join(ins, "\n"))
	}
	for i, o := range ops {
		// AT&T order: the low half's source, the high half's, dst.
		want := fmt.Sprintf("vcvtne2ps2bf16 %%zmm%d,%%zmm%d,%%zmm%d", o[2], o[1], o[0])
		if strings.Join(strings.Fields(ins[i]), " ") != want {
			t.Errorf("operands %v: decoded %q, want %q", o, ins[i], want)
		}
	}
}

// TestTransposeOrder checks that the transpose levels really transpose:
// every level pairs lanes of one input only, and the result holds each
// input's sum in exactly one lane.
func TestTransposeOrder(t *testing.T) {
	for _, V := range []int{8, 16} {
		order, ok := transposeOrder(V)
		if !ok || len(order) != V {
			t.Fatalf("V=%d: levels do not transpose (order %v)", V, order)
		}
	}
}

// TestNativePrefetchIntoL2 checks that the native kernel's column blocks
// over rows far apart prefetch the rows ahead into the L2 (prefetcht1)
// and not into the L1 (prefetcht0, which rows a multiple of a page apart
// would evict from their shared L1 sets), on both instruction sets.
func TestNativePrefetchIntoL2(t *testing.T) {
	cols := func(dt dtypes.DataType, r plan.Reduction) *plan.Plan {
		return kind(kerneltest.DensePlan(t, dt, []int64{1024, 4096}, []int64{4096, 1}, []bool{true, false}, plan.Reduction{}), r)
	}
	for _, o := range []Options{{AVX512: true}, {}} {
		for _, c := range []struct {
			dt dtypes.DataType
			r  plan.Reduction
		}{
			{dtypes.F64, plan.AlgSum.Reduction(0, 0)},
			{dtypes.F64, plan.AlgMax.Reduction(0, 0)},
			{dtypes.S64, plan.AlgMin.Reduction(0, 0)},
			{dtypes.S32, plan.AlgSum.Reduction(0, 0)},
		} {
			pl := cols(c.dt, c.r)
			if !kernelshape.IsNative(pl) {
				t.Fatalf("%v: not a native plan", pl)
			}
			code, err := Emit(pl, o)
			if err != nil {
				t.Fatalf("%v (avx512 %v): %v", pl, o.AVX512, err)
			}
			text := strings.Join(disassemble(t, code.Text), "\n")
			if !strings.Contains(text, "prefetcht1") || strings.Contains(text, "prefetcht0") {
				t.Errorf("%v (avx512 %v): prefetcht1 %v, prefetcht0 %v; want the L2's only", pl, o.AVX512,
					strings.Contains(text, "prefetcht1"), strings.Contains(text, "prefetcht0"))
			}
		}
	}
}

// TestNativeIdentityBuiltOnce checks that a native kernel whose
// accumulators start at an identity built through a general register
// (an f64 max's -Inf, an s64 min's greatest value, an f64 product's 1)
// builds it once per run of accumulators and copies it to the others:
// each row of [64, 1024] starts 16 accumulators on AVX-512 and 8 on
// AVX2, in the row kernel and, for a float max, in its retry that
// checks for NaN.
func TestNativeIdentityBuiltOnce(t *testing.T) {
	for _, c := range []struct {
		dt       dtypes.DataType
		alg      plan.Alg
		identity string
		runs     int
	}{
		{dtypes.F64, plan.AlgMax, "movabs $0xfff0000000000000,", 2},
		{dtypes.S64, plan.AlgMin, "movabs $0x7fffffffffffffff,", 1},
		{dtypes.F64, plan.AlgMul, "movabs $0x3ff0000000000000,", 1},
	} {
		for _, o := range []Options{{AVX512: true}, {}} {
			pl := kerneltest.DensePlan(t, c.dt, []int64{64, 1024}, []int64{1024, 1}, []bool{false, true}, c.alg.Reduction(0, 0))
			code, err := Emit(pl, o)
			if err != nil {
				t.Fatalf("%v %v avx512=%v: %v", c.dt, c.alg, o.AVX512, err)
			}
			text := strings.Join(disassemble(t, code.Text), "\n")
			built, copies := strings.Count(text, c.identity), strings.Count(text, "vmovaps %")
			accs := 8
			if o.AVX512 {
				accs = 16
			}
			if built != c.runs || copies < c.runs*(accs-1) {
				t.Errorf("%v %v avx512=%v: identity built %d times, %d register copies; want %d and at least %d",
					c.dt, c.alg, o.AVX512, built, copies, c.runs, c.runs*(accs-1))
			}
		}
	}
}
