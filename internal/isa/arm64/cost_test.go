package arm64

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// Static cost of the hot loops, read back from the disassembly: the
// instructions of the innermost loop divided by the src elements it
// loads per iteration. It guards against regressions in the shape of the
// inner loops (an address computation slipping into them, a lost
// multi-register load) without timing anything.

var (
	insnAddr   = regexp.MustCompile(`^b\.ne 0x([0-9a-f]+)$`)
	ld1List    = regexp.MustCompile(`^ld1 \{v(\d+)\.(4s|4h|8h)(?:-v(\d+)\.(?:4s|4h|8h)|((?:, v\d+\.(?:4s|4h|8h))*))\}`)
	loadSingle = regexp.MustCompile(`^(ldr|ldur|ldp) ([qdhs])\d+`)
)

// loadedBytes returns the bytes one instruction loads into vector
// registers (0 for anything else).
func loadedBytes(text string) int {
	if m := ld1List.FindStringSubmatch(text); m != nil {
		n := 1
		if m[3] != "" {
			a, _ := strconv.Atoi(m[1])
			b, _ := strconv.Atoi(m[3])
			n = b - a + 1
		} else if m[4] != "" {
			n += strings.Count(m[4], ",")
		}
		if m[2] == "4h" {
			return 8 * n
		}
		return 16 * n
	}
	if m := loadSingle.FindStringSubmatch(text); m != nil {
		b := map[string]int{"q": 16, "d": 8, "s": 4, "h": 2}[m[2]]
		if m[1] == "ldp" {
			b *= 2
		}
		return b
	}
	return 0
}

// innerLoopCost returns the instructions per src element of the hottest
// innermost loop of code (the innermost loop that loads the most bytes
// per iteration), with the loop's instruction and element counts.
func innerLoopCost(t *testing.T, code []byte, elemSize int) (perElem float64, insns, elems int) {
	t.Helper()
	ins := disassemble(t, code)
	type loop struct{ from, to int }
	var loops []loop
	for i, in := range ins {
		if m := insnAddr.FindStringSubmatch(in.text); m != nil {
			target, _ := strconv.ParseInt(m[1], 16, 64)
			if int(target)/4 <= i {
				loops = append(loops, loop{int(target) / 4, i})
			}
		}
	}
	best := -1
	for _, l := range loops {
		innermost := true
		for _, o := range loops {
			if o != l && o.from >= l.from && o.to <= l.to {
				innermost = false
			}
		}
		if !innermost {
			continue
		}
		bytes := 0
		for _, in := range ins[l.from : l.to+1] {
			bytes += loadedBytes(in.text)
		}
		if bytes > best {
			best, insns, elems = bytes, l.to-l.from+1, bytes/elemSize
		}
	}
	if elems == 0 {
		t.Fatalf("no loop loading data in\n%v", ins)
	}
	return float64(insns) / float64(elems), insns, elems
}

// TestInnerLoopCost reports (with -v) and bounds the instructions per
// element of the row, grouped-row and column inner loops for each src
// data type. The bounds are the loops as designed: f32 needs a load per
// four vectors and an add per vector, 16-bit types a load per eight
// vectors and a widening and an add per vector, plus the loop's counter,
// branch and (column) row step.
func TestInnerLoopCost(t *testing.T) {
	cases := []struct {
		name  string
		dims  []int64
		axis  int
		bound map[dtypes.DataType]float64
	}{
		{"row [64,4096]/1", []int64{64, 4096}, 1, map[dtypes.DataType]float64{dtypes.F32: 0.38, dtypes.BF16: 0.6, dtypes.F16: 0.6}},
		{"row grouped [4096,64]/1", []int64{4096, 64}, 1, map[dtypes.DataType]float64{dtypes.F32: 0.44, dtypes.BF16: 0.69, dtypes.F16: 0.69}},
		{"column [1024,4096]/0", []int64{1024, 4096}, 0, map[dtypes.DataType]float64{dtypes.F32: 0.36, dtypes.BF16: 0.58, dtypes.F16: 0.58}},
	}
	for _, c := range cases {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			pl, err := plan.Canonicalize(kerneltest.DenseProblem(c.dims, []int{c.axis}, dt))
			if err != nil {
				t.Fatal(err)
			}
			code, err := Emit(pl)
			if err != nil {
				t.Fatal(err)
			}
			per, n, e := innerLoopCost(t, code.Text, dt.Size())
			t.Logf("%-26s %-5v %2d instructions / %3d elements = %.3f per element", c.name, dt, n, e, per)
			if per > c.bound[dt] {
				t.Errorf("%s %v: %.3f instructions per element, want at most %.3f", c.name, dt, per, c.bound[dt])
			}
		}
	}
}
