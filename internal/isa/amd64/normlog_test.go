package amd64

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// normRowsPlan is the plan of a normalization over rows of n elements,
// rows of them, dense, src sdt and dst ddt.
func normRowsPlan(t *testing.T, sdt, ddt dtypes.DataType, rows, n int64, post ...plan.PostOp) *plan.Plan {
	t.Helper()
	post = append([]plan.PostOp(nil), post...)
	for i := range post {
		if post[i].Kind.IsBinary() {
			post[i].BinStrides = []int64{0, 0}
		}
	}
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: sdt, DstDT: ddt,
		Dims: []int64{rows, n}, Reduce: []bool{false, true}, SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}, PostOps: post})
	if err != nil {
		t.Fatal(err)
	}
	pl.Reduced[0].DstStride = 1
	for i := range pl.Reduced[0].BinStrides {
		pl.Reduced[0].BinStrides[i] = 1 // each operand along the row, the same for every row
	}
	return pl
}

// TestNormLogRowsPacked checks that AVX-512 takes f32 log-softmax rows
// that fit its registers in groups whose sums' logs are one (four
// VINSERTF32X4 into a register, one log, four VSHUFF32X4 out of it: the
// kernelshape.NormRowPacker primitives), and bf16 ones too where it
// converts bf16 natively (its bf16 stores in pairs), that log-softmax
// rows not held and taken two at a time share one log the same way (two
// of each; AVX2 packs with two VBLENDPS and unpacks with two
// VPERM2F128), and that softmax, the bf16 log-softmax of held rows
// without native bf16, f16's, and AVX2's held rows (whose group does not
// fit its registers) pack nothing. The results are
// TestNormKernelInterleavedRows's (package jit).
func TestNormLogRowsPacked(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	for _, c := range []struct {
		name string
		kind kernelshape.NormKind
		dt   dtypes.DataType
		n    int64
		o    Options
		want string // "group", "pair" or "none"
	}{
		{"f32 log-softmax of 128, avx512", kernelshape.NormLogSoftmax, f32, 128, Options{AVX512: true}, "group"},
		{"f32 log-softmax of 13, avx512", kernelshape.NormLogSoftmax, f32, 13, Options{AVX512: true}, "group"},
		{"f32 log-softmax of 161, avx512 (not held)", kernelshape.NormLogSoftmax, f32, 161, Options{AVX512: true}, "pair"},
		{"bf16 log-softmax of 161, avx512 (not held)", kernelshape.NormLogSoftmax, bf16, 161, Options{AVX512: true}, "pair"},
		{"f32 softmax of 128, avx512", kernelshape.NormSoftmax, f32, 128, Options{AVX512: true}, "none"},
		{"f32 softmax of 161, avx512", kernelshape.NormSoftmax, f32, 161, Options{AVX512: true}, "none"},
		{"bf16 log-softmax of 128, avx512", kernelshape.NormLogSoftmax, bf16, 128, Options{AVX512: true}, "none"},
		{"bf16 log-softmax of 128, avx512 with native bf16", kernelshape.NormLogSoftmax, bf16, 128, Options{AVX512: true, BF16: true}, "group"},
		{"f16 log-softmax of 128, avx512 with native bf16", kernelshape.NormLogSoftmax, dtypes.F16, 128, Options{AVX512: true, BF16: true}, "none"},
		{"f32 log-softmax of 16, avx2", kernelshape.NormLogSoftmax, f32, 16, Options{}, "none"},
		{"f32 log-softmax of 128, avx2 (not held)", kernelshape.NormLogSoftmax, f32, 128, Options{}, "pair"},
		{"f32 softmax of 128, avx2", kernelshape.NormSoftmax, f32, 128, Options{}, "none"},
	} {
		code, err := EmitNorm(&kernelshape.Norm{Kind: c.kind, Plan: normRowsPlan(t, c.dt, c.dt, 8, c.n)}, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := packedLogs(t, code.Text); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestNormLogGroupsWithPostOps checks that binary post-ops, whose
// operands take registers and pointers, leave AVX-512's log-softmax rows
// of 128 in their groups (TestNormLogRowsPacked), f32 and native bf16.
func TestNormLogGroupsWithPostOps(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	for _, c := range []struct {
		dt   dtypes.DataType
		o    Options
		post []plan.PostOp
	}{
		{f32, Options{AVX512: true}, []plan.PostOp{{Kind: ops.Add, BinDT: f32}, {Kind: ops.Multiply, BinDT: bf16}, {Kind: ops.ReLU}}},
		{bf16, Options{AVX512: true, BF16: true}, []plan.PostOp{{Kind: ops.Add, BinDT: f32}, {Kind: ops.Maximum, BinDT: f32}}},
	} {
		code, err := EmitNorm(&kernelshape.Norm{Kind: kernelshape.NormLogSoftmax, Plan: normRowsPlan(t, c.dt, c.dt, 8, 128, c.post...)}, c.o)
		if err != nil {
			t.Fatalf("%v with %d post-ops: %v", c.dt, len(c.post), err)
		}
		if got := packedLogs(t, code.Text); got != "group" {
			t.Errorf("%v log-softmax of 128 with %d post-ops: %s, want group", c.dt, len(c.post), got)
		}
	}
}

// packedLogs says how the log-softmax kernel text packs its rows' logs
// (TestNormLogRowsPacked): "group", "pair", "none", or what it counted
// where the counts are neither.
func packedLogs(t *testing.T, text []byte) string {
	t.Helper()
	var ins, outs, logs, blends, perms int
	for _, in := range disassemble(t, text) {
		switch {
		case strings.HasPrefix(in, "vinsertf32x4"):
			ins++
		case strings.HasPrefix(in, "vshuff32x4 $0x0,") || strings.HasPrefix(in, "vshuff32x4 $0x55,") ||
			strings.HasPrefix(in, "vshuff32x4 $0xaa,") || strings.HasPrefix(in, "vshuff32x4 $0xff,"):
			outs++
		case strings.HasPrefix(in, "vgetmantps"):
			logs++
		case strings.HasPrefix(in, "vblendps $0xf,") || strings.HasPrefix(in, "vblendps $0xf0,"):
			blends++
		case strings.HasPrefix(in, "vperm2f128 $0x0,") || strings.HasPrefix(in, "vperm2f128 $0x11,"):
			perms++
		}
	}
	switch {
	case ins == 4 && outs == 4 && logs == 2: // the group's one log and the one-row kernel's (the odd rows')
		return "group"
	case ins == 2 && outs == 2 && blends == 0 && perms == 0, ins == 0 && outs == 0 && blends == 2 && perms == 2:
		return "pair"
	case ins != 0 || outs != 0 || blends != 0 || perms != 0:
		return fmt.Sprintf("something else (%d inserts, %d block shuffles, %d blends, %d permutes, %d logs)", ins, outs, blends, perms, logs)
	}
	return "none"
}

// TestNormLogGroupPrefetch checks that a group of f32 log-softmax rows
// (AVX-512's, TestNormLogRowsPacked) prefetches into L2, in its map
// sweep, every line of the rows normLogAhead (2) groups of 4 on where
// the kernel prefetches rows (from memory), and nothing where it does
// not: rows of 128 elements (8 lines each) and of 13 (52 bytes, a line
// each, the rows not on line boundaries).
func TestNormLogGroupPrefetch(t *testing.T) {
	for _, n := range []int64{128, 13} {
		for _, pf := range []bool{false, true} {
			code, err := EmitNorm(&kernelshape.Norm{Kind: kernelshape.NormLogSoftmax, Plan: normRowsPlan(t, dtypes.F32, dtypes.F32, 8, n), PrefetchRows: pf}, Options{AVX512: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, in := range disassemble(t, code.Text) {
				if strings.HasPrefix(in, "prefetch") {
					got[in]++
				}
			}
			want := map[string]int{}
			if pf {
				rowBytes := 4 * n
				for i := int64(0); i < 4; i++ { // the group's rows, each from its own start
					for o := int64(0); o < rowBytes; o += 64 {
						want[fmt.Sprintf("prefetcht1 %#x(%%rsi)", 8*rowBytes+i*rowBytes+o)]++
					}
				}
			}
			if !maps.Equal(got, want) {
				t.Errorf("rows of %d, prefetching rows %v: prefetches %v, want %v", n, pf, got, want)
			}
		}
	}
}

// TestNormLogGroupStreams checks that a group of f32 or bf16 log-softmax
// rows (AVX-512's, TestNormLogRowsPacked) stores its map's whole vectors
// non-temporally, with an SFENCE before the return, where the kernel
// streams its dst, and regularly where it does not, bf16's two vectors
// at a time (one VCVTNE2PS2BF16 and one store a pair): rows of 128 (the
// group's 4 rows of 8 vectors each; the one-row kernel of the rows left
// over holds its row and stores it regularly) and of 13 (no whole
// vector, so nothing streams).
func TestNormLogGroupStreams(t *testing.T) {
	for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
		for _, n := range []int64{128, 13} {
			for _, stream := range []bool{false, true} {
				code, err := EmitNorm(&kernelshape.Norm{Kind: kernelshape.NormLogSoftmax, Plan: normRowsPlan(t, dt, dt, 8, n), StreamDst: stream}, Options{AVX512: true, BF16: true})
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]int{}
				for _, in := range disassemble(t, code.Text) {
					op, args, _ := strings.Cut(in, " ")
					switch op {
					case "vmovntps", "sfence", "vcvtne2ps2bf16":
						got[op]++
					case "vmovntdq":
						got[op+" "+args[:4]]++ // the register's width
					}
				}
				want := map[string]int{}
				if dt == dtypes.BF16 {
					// The group's 4 rows of 4 pairs (the held row left
					// over converts its vectors one by one, checked once
					// a row).
					want["vcvtne2ps2bf16"] = 4 * 4
					if n == 13 {
						want = map[string]int{}
					}
				}
				if stream && n == 128 {
					want["sfence"] = 1
					if dt == dtypes.F32 {
						want["vmovntps"] = 4 * 8
					} else {
						want["vmovntdq %zmm"] = 4 * 4
					}
				}
				if !maps.Equal(got, want) {
					t.Errorf("%v rows of %d, streamed %v: %v, want %v", dt, n, stream, got, want)
				}
			}
		}
	}
}
