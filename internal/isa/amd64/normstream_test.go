package amd64

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
)

// TestNormHalfDstStores checks the map's whole-vector stores of f16 and
// bf16 dsts in rows not held in registers: non-temporal (VMOVNTDQ of the
// converted half register, or of a bf16 pair, with an SFENCE before the
// return) where the kernel streams its dst, regular where it does not,
// and never a non-temporal store wider than StreamAlign, which the
// caller aligns dst to. AVX-512's native bf16 pairs check the two f32
// vectors they convert for subnormals (VFPCLASSPS each, one KORTESTW),
// not the results for zeros (no VPTESTNMW), so zeros in the data do not
// send the branch to the exact path. AVX2's bf16 pairs pack their two
// rounded vectors with one VPACKUSDW and one VPERMQ and branch to their
// NaN fix-up on one VPTEST; AVX-512 without native bf16 stores single
// vectors.
func TestNormHalfDstStores(t *testing.T) {
	for _, o := range []Options{{AVX512: true, BF16: true}, {AVX512: true}, {}} {
		for _, dt := range []dtypes.DataType{dtypes.BF16, dtypes.F16} {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("%v, avx512 %v, native bf16 %v, streamed %v", dt, o.AVX512, o.BF16, stream)
				n := &kernelshape.Norm{Kind: kernelshape.NormRMS, Plan: normRowsPlan(t, dt, dt, 8, 4096), Epsilon: 1e-5, StreamDst: stream}
				code, err := EmitNorm(n, o)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				count := map[string]int{}
				text := disassemble(t, code.Text)
				for _, in := range text {
					op, args, _ := strings.Cut(in, " ")
					switch op {
					case "vmovntdq", "vmovntps":
						count[op+" "+args[:4]]++ // the register's width
					case "sfence", "vptestnmw", "vcvtne2ps2bf16", "vpermq", "vptest":
						count[op]++
					case "kortestw":
						if args == "%k6,%k7" {
							count["kortestw pair"]++
						}
					}
				}
				pairs := o.AVX512 && o.BF16 && dt == dtypes.BF16
				packed := !o.AVX512 && dt == dtypes.BF16
				want := map[string]int{}
				if pairs {
					want["vcvtne2ps2bf16"] = 1
					want["kortestw pair"] = 1
				}
				if packed {
					want["vpermq"] = 1
					want["vptest"] = 1
				}
				if stream {
					want["sfence"] = 1
					switch {
					case pairs:
						want["vmovntdq %zmm"] = 1
					case packed:
						want["vmovntdq %ymm"] = 1
					case o.AVX512:
						want["vmovntdq %ymm"] = 2 // the map's chunk of two vectors
					default:
						want["vmovntdq %xmm"] = 2
					}
				}
				if fmt.Sprint(count) != fmt.Sprint(want) {
					t.Errorf("%s: %v, want %v in\n%s", name, count, want, strings.Join(text, "\n"))
				}
				widths := map[string]int64{"%xmm": 16, "%ymm": 32, "%zmm": 64}
				for k := range count {
					if w, ok := widths[strings.TrimPrefix(k, "vmovntdq ")]; ok && w > StreamAlign(dt, o) {
						t.Errorf("%s: %s stores %d bytes, StreamAlign %d", name, k, w, StreamAlign(dt, o))
					}
				}
			}
		}
	}
}

// TestStreamAlign pins the alignment streamed stores need: a vector of
// f32, half a vector of f16 or bf16, a whole one for bf16 where it
// stores pairs (AVX2, AVX-512 with native bf16); none for other types.
func TestStreamAlign(t *testing.T) {
	for _, c := range []struct {
		dt   dtypes.DataType
		o    Options
		want int64
	}{
		{dtypes.F32, Options{AVX512: true}, 64},
		{dtypes.F32, Options{}, 32},
		{dtypes.BF16, Options{AVX512: true, BF16: true}, 64},
		{dtypes.BF16, Options{AVX512: true}, 32},
		{dtypes.F16, Options{AVX512: true, BF16: true}, 32},
		{dtypes.BF16, Options{}, 32},
		{dtypes.F16, Options{}, 16},
		{dtypes.S8, Options{AVX512: true}, 0},
		{dtypes.F64, Options{AVX512: true}, 0},
	} {
		if got := StreamAlign(c.dt, c.o); got != c.want {
			t.Errorf("StreamAlign(%v, %+v) = %d, want %d", c.dt, c.o, got, c.want)
		}
	}
}
