package amd64

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// watchNaNs64 are f64 NaNs of both signs, quiet and signalling, with
// small, large and all-ones payloads, and payloads in the lower half
// only.
var watchNaNs64 = []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff0000000000001,
	0x7ff7ffffffffffff, 0xffffffffffffffff, 0x7ff00000ffffffff, 0xfff0000080000000}

// watchFill64 fills src's f64 elements by pattern, as watchFill does f32's;
// at is a position for the patterns that place one special value.
func watchFill64(r *rand.Rand, src []byte, pattern string, at int64) {
	n := int64(len(src) / 8)
	put := func(i int64, v float64) { plan.StoreF64(dtypes.F64, src, i, v) }
	huge := math.MaxFloat64
	finite := []float64{huge, -huge, huge / 2, -huge / 2, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		math.Float64frombits(0x000fffffffffffff), 0, math.Copysign(0, -1), 1, -1, 3.5, -3.5, 1e300, -1e300, 0.1}
	nan := func() float64 { return math.Float64frombits(watchNaNs64[r.Intn(len(watchNaNs64))]) }
	for i := range n {
		var v float64
		switch pattern {
		case "huge+", "huge+ then -inf", "nan in huge":
			v = huge // every lane's sum overflows to +Inf
		case "huge-":
			v = -huge
		case "zeros":
			v = []float64{0, math.Copysign(0, -1)}[r.Intn(2)]
		case "+inf":
			v = math.Inf(1)
		case "-inf":
			v = math.Inf(-1)
		default:
			v = finite[r.Intn(len(finite))]
		}
		put(i, v)
	}
	switch pattern {
	case "nan", "nan in huge":
		put(at, nan())
	case "both infs":
		put(at, math.Inf(1))
		put(r.Int63n(n), math.Inf(-1))
	case "huge+ then -inf":
		put(at, math.Inf(-1))
	case "nan and infs":
		put(r.Int63n(n), math.Inf(1))
		put(r.Int63n(n), math.Inf(-1))
		put(at, nan())
	}
}

// TestNativeWatchSum runs f64 max and min whose AVX-512 NaN-free code,
// paced to memory on Zen cores, checks the src by a watch sum (Z30, the
// f32 kernels' rangeWatched in f64 lanes) on data built to fool a sum:
// one NaN of any sign, quietness and payload at each position of short
// rows (and at the vector and row edges of long ones), infinities of one
// sign or both, values near ±MaxFloat64 whose sums overflow (and then
// meet -Inf), signed zeros and subnormals. Rows, rows under a reduced
// loop and columns (which take the watch under the same gate) are
// emitted under FromMemory for Zen cores on every ISA of the machine:
// every result must equal the interpreter's bit for bit (a NaN any NaN).
func TestNativeWatchSum(t *testing.T) {
	isaList := zenISAs(t)
	h := kernelconf.Hints{FromMemory: true}
	r := rand.New(rand.NewSource(64))
	var shapes [][3][]int64
	for _, n := range []int64{1, 2, 7, 8, 9, 15, 16, 17, 33, 127, 128, 129, 1000} {
		shapes = append(shapes, [3][]int64{{3, n}, {n, 1}, {0, 1}})
	}
	shapes = append(shapes,
		[3][]int64{{2, 3, 40}, {129, 43, 1}, {0, 1, 1}}, // three row sweeps an output (padded: not merged)
		[3][]int64{{37, 24}, {24, 1}, {1, 0}},           // columns
		[3][]int64{{5, 9}, {11, 1}, {1, 0}})             // columns, padded, a tail
	patterns := []string{"finite", "huge+", "huge-", "huge+ then -inf", "zeros", "+inf", "-inf",
		"nan", "nan in huge", "both infs", "nan and infs"}
	ran := 0
	for _, isa := range isaList {
		t.Logf("runs on %s", isa.name) // the watch is AVX-512's: a machine without it tests the compares only
	}
	for _, s := range shapes {
		for _, red := range []plan.Reduction{plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0)} {
			p := problemOf(s, dtypes.F64, dtypes.F64, red)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			n := sb / 8
			var ats []int64
			if n <= 128 {
				for at := range n {
					ats = append(ats, at)
				}
			} else {
				row := s[0][len(s[0])-1]
				for _, a := range []int64{0, 1, 7, 8, 9, row - 9, row - 8, row - 1, row, n - 9, n - 8, n - 1, r.Int63n(n), r.Int63n(n)} {
					if a >= 0 && a < n {
						ats = append(ats, a)
					}
				}
			}
			var srcs, refs [][]byte
			for _, pat := range patterns {
				places := []int64{0}
				switch pat {
				case "nan", "nan in huge", "both infs", "huge+ then -inf", "nan and infs":
					places = ats
				}
				for _, at := range places {
					src := make([]byte, sb)
					watchFill64(r, src, pat, at)
					ref := kerneltest.Dst(t, p, 0xa5)
					if err := interp.Run(pl, src, ref, nil); err != nil {
						t.Fatal(err)
					}
					srcs, refs = append(srcs, src), append(refs, ref)
				}
			}
			ran += runNativeEach(t, isaList, h, p, srcs, nil, func(name string, at int, dst []byte) {
				ref := refs[at]
				for i := range int64(len(dst) / 8) {
					g, w := plan.LoadF64(dtypes.F64, dst, i), plan.LoadF64(dtypes.F64, ref, i)
					if !sameF64(g, w) {
						t.Fatalf("%s: src %d: dst[%d] = %v, interpreter %v", name, at, i, g, w)
					}
				}
			})
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// TestNativeWatchSumGate checks where f64 max and min take the watch sum:
// AVX-512 code of plans read from memory on Zen cores (the f32 kernels'
// Conf.Watch), whose paced row loop then combines each src vector and
// adds it into Z30 with no compare, and whose return tests Z30 as f64
// once; every other kernel checks its loads by compares and has no
// watch.
func TestNativeWatchSumGate(t *testing.T) {
	for _, red := range []plan.Reduction{plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0)} {
		pl, err := plan.Canonicalize(problemOf([3][]int64{{16, 65536}, {65536, 1}, {0, 1}}, dtypes.F64, dtypes.F64, red))
		if err != nil {
			t.Fatal(err)
		}
		for _, avx512 := range []bool{false, true} {
			if !avx512 && red.Combine == plan.CombineMin {
				continue // AVX2's min does not speculate
			}
			for _, zm := range [][2]bool{{false, false}, {true, true}, {true, false}, {false, true}} {
				code, err := EmitHinted(pl, kernelconf.Hints{FromMemory: zm[1]}, Options{AVX512: avx512, Zen: zm[0]})
				if err != nil {
					t.Fatal(err)
				}
				ins := disassemble(t, code.Text)
				count := func(prefix string) int {
					c := 0
					for _, s := range ins {
						if strings.HasPrefix(s, prefix) {
							c++
						}
					}
					return c
				}
				watched := avx512 && zm[0] && zm[1]
				adds := count("vaddpd %zmm31,%zmm30,%zmm30")
				tests := count("vcmpunordpd %zmm30,%zmm30,%k4")
				loop := strings.Join(pacedLoop(t, ins), "\n")
				switch {
				case watched && (adds != 1 || tests != 1 || strings.Contains(loop, "vcmp") || strings.Contains(loop, "korw")):
					t.Errorf("%v avx512 %v zen %v fromMemory %v: %d watch adds, %d tests of the watch, want 1 and 1 and a loop without compares:\n%s",
						red, avx512, zm[0], zm[1], adds, tests, loop)
				case !watched && (adds != 0 || tests != 0 || !strings.Contains(loop, "vcmpunordpd")):
					t.Errorf("%v avx512 %v zen %v fromMemory %v: %d watch adds, %d tests of the watch, want none and compares:\n%s",
						red, avx512, zm[0], zm[1], adds, tests, loop)
				}
			}
		}
	}
}

// pacedLoop is the first loop of ins that combines src from memory, from
// its load to its backward jump.
func pacedLoop(t *testing.T, ins []string) []string {
	t.Helper()
	for i, s := range ins {
		if !strings.Contains(s, "(%rsi)") || !strings.HasPrefix(s, "vmovupd") && !strings.HasPrefix(s, "vmaxpd") && !strings.HasPrefix(s, "vrangepd") {
			continue
		}
		for j := i; j < len(ins); j++ {
			if strings.HasPrefix(ins[j], "jmp") || strings.HasPrefix(ins[j], "jne") {
				return ins[i : j+1]
			}
		}
	}
	t.Fatalf("no loop combining src in\n%s", strings.Join(ins, "\n"))
	return nil
}
