package amd64

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// streamShapes is the shapes of TestNativeStreamedRows over rows of rk
// elements: one row, two rows each reduced, and three rows 40 elements
// apart reduced together (the row's sweep under an outer reduced loop).
func streamShapes(rk int64) [][3][]int64 {
	return [][3][]int64{
		{{1, rk}, {rk, 1}, {0, 1}},
		{{2, rk}, {rk, 1}, {0, 1}},
		{{3, rk}, {rk + 40, 1}, {1, 1}},
	}
}

// streamLengths is the row lengths of TestNativeStreamedRows for data of
// size bytes: just short of the streamed bound (minStreamedRow bytes in
// whole blocks), past it by a tail of vectors and elements (the middle
// one), and three times it.
func streamLengths(size int64) []int64 {
	elems := intelTuning.minStreamedRow / size
	return []int64{elems - 1, elems + 37, 3*elems + 77}
}

// readsMidRow reports whether code loads from the middle half of a row
// of rowBytes at the src pointer (rsi): a row read as two streams loads
// its second stream there in every iteration, where one stream's loop
// loads near the pointer and its tail near the row's end.
func readsMidRow(t *testing.T, code []byte, rowBytes int64) bool {
	for _, s := range disassemble(t, code) {
		i := strings.Index(s, "(%rsi)")
		if i < 0 {
			continue
		}
		j := strings.LastIndexAny(s[:i], " ,") + 1
		d, err := strconv.ParseInt(strings.TrimPrefix(s[j:i], "0x"), 16, 64)
		if err == nil && d > rowBytes/4 && d < 3*rowBytes/4 {
			return true
		}
	}
	return false
}

// TestNativeStreamedRowsCode checks which native rows read as two
// streams, on both instruction sets, paced (FromMemory on Zen cores) and
// not: rows whose whole blocks are minStreamedRow bytes or more, as f32's
// (Conf.streams), and not a row just short of it, nor a column, nor
// AVX-512's paced rows (one accumulator).
func TestNativeStreamedRowsCode(t *testing.T) {
	for _, avx512 := range []bool{false, true} {
		for _, cfg := range []struct {
			h   kernelconf.Hints
			zen bool
		}{{kernelconf.Hints{FromMemory: true}, true}, {kernelconf.Hints{}, false}} {
			for _, c := range []struct {
				sdt dtypes.DataType
				alg plan.Alg
			}{{dtypes.S32, plan.AlgSum}, {dtypes.S64, plan.AlgMax}, {dtypes.S16, plan.AlgMin}, {dtypes.F64, plan.AlgSum}, {dtypes.F64, plan.AlgMax}} {
				size := int64(c.sdt.Size())
				ls := streamLengths(size)
				for i, rk := range ls {
					for _, columns := range []bool{false, true} {
						pl, err := plan.Canonicalize(twoD(c.alg.Reduction(0, 0), c.sdt, c.sdt, 2, rk, columns))
						if err != nil {
							t.Fatal(err)
						}
						code, err := EmitHinted(pl, cfg.h, Options{AVX512: avx512, Zen: cfg.zen})
						if err != nil {
							t.Fatalf("%v: %v", pl, err)
						}
						// AVX-512's paced sweep adds into one register, a
						// line an add, and reads one stream, as f32's.
						want := i > 0 && !columns && !(avx512 && cfg.zen)
						if got := readsMidRow(t, code.Text, rk*size); got != want {
							t.Errorf("avx512 %v, zen %v, %v of %v, %d elements (columns %v): streamed %v, want %v",
								avx512, cfg.zen, c.alg, c.sdt, rk, columns, got, want)
						}
					}
				}
			}
		}
	}
}

// TestNativeStreamedRows runs the native kernel's long rows, read as two
// streams (TestNativeStreamedRowsCode), on every ISA, paced (FromMemory
// on Zen cores) and not: every exact reduction of the exact types
// (kerneltest.ExactPairs) against the exact oracle and the interpreter
// byte for byte; f64 sums cut into runs against the oracle's bound; f64
// max and min with one NaN at places in both halves of a row against
// the interpreter bit for bit. -short (the AVX-512 run under Bochs) takes
// the sums and means of s32 and s64 and the f64 sums, rows past the
// bound by a tail, in one and three rows, and the f64 max and min in one
// row.
func TestNativeStreamedRows(t *testing.T) {
	r := rand.New(rand.NewSource(57))
	types := []dtypes.DataType{dtypes.S8, dtypes.U16, dtypes.S32, dtypes.U64, dtypes.Boolean} // each lane width, signed and unsigned
	lengths, shapes := streamLengths, streamShapes
	exactCases := kerneltest.ExactPairs
	if testing.Short() {
		types = []dtypes.DataType{dtypes.S32, dtypes.S64}
		exactCases = func(r *rand.Rand, sdt dtypes.DataType) []kerneltest.ExactCase {
			var cs []kerneltest.ExactCase
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				if c.Reduction.Combine == plan.CombineAdd {
					cs = append(cs, c) // the sum, and the mean (s64's in pairs of registers)
				}
			}
			return cs
		}
		lengths = func(size int64) []int64 { return streamLengths(size)[1:2] }
		shapes = func(rk int64) [][3][]int64 { s := streamShapes(rk); return [][3][]int64{s[0], s[2]} }
	}
	for _, cfg := range []struct {
		name string
		h    kernelconf.Hints
		zen  bool
	}{{"paced", kernelconf.Hints{FromMemory: true}, true}, {"not paced", kernelconf.Hints{}, false}} {
		isaList := isas(t)
		for i := range isaList {
			isaList[i].o.Zen = cfg.zen
		}
		ran := 0
		mid := len(lengths(1)) / 2 // the length past the bound by a tail
		for _, sdt := range types {
			for i, rk := range lengths(int64(sdt.Size())) {
				ss := shapes(rk)
				if i != mid {
					ss = ss[:1] // every shape at mid only
				}
				for _, s := range ss {
					for _, c := range exactCases(r, sdt) {
						p := problemOf(s, sdt, c.DstDT, c.Reduction)
						ran += checkNativeExactHinted(t, isaList, cfg.h, p, exactSrc(t, r, p))
					}
				}
			}
		}
		for i, rk := range lengths(8) {
			ss := shapes(rk)
			if i != mid {
				ss = ss[:1]
			}
			for j, s := range ss {
				ran += checkWideBound(t, r, isaList, cfg.h, problemOf(s, dtypes.F64, dtypes.F64, plan.AlgSum.Reduction(0, 0)))
				if j == 0 || !testing.Short() {
					ran += checkStreamedNaNs(t, r, isaList, cfg.h, s, rk)
				}
			}
		}
		if ran == 0 {
			t.Fatalf("%s: no plan ran machine code", cfg.name)
		}
	}
}

// checkStreamedNaNs runs f64 max and min over shape s (rows of rk) with
// one NaN at the first, the middle two and the last element of the first
// row and at the last element of all, and with none, against the
// interpreter bit for bit (checkNaNPlaces); it returns the runs made.
func checkStreamedNaNs(t *testing.T, r *rand.Rand, isaList []isaCase, h kernelconf.Hints, s [3][]int64, rk int64) int {
	t.Helper()
	ran := 0
	for _, alg := range []plan.Alg{plan.AlgMax, plan.AlgMin} {
		p := problemOf(s, dtypes.F64, dtypes.F64, alg.Reduction(0, 0))
		sb, err := p.SrcBytes()
		if err != nil {
			t.Fatal(err)
		}
		ran += checkNaNPlaces(t, r, isaList, h, p, []int64{0, rk/2 - 1, rk / 2, rk - 1, sb/8 - 1, -1})
	}
	return ran
}
