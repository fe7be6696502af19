package amd64

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// zenISAs is isas with Options.Zen set: the cores whose row sweeps from
// DRAM are paced.
func zenISAs(t *testing.T) []isaCase {
	list := isas(t)
	for i := range list {
		list[i].o.Zen = true
	}
	return list
}

// hintIdle reports whether the hints h leave p's code as it is without
// them on every ISA of isaList (a column under FromMemory, say): such a
// problem is the unhinted tests' (TestNativeExactShapes,
// TestNativeWideShapes, TestNativeMaxMinNaNAt), and a hinted test that
// ran it again would only repeat them. Zero hints are never idle.
func hintIdle(t *testing.T, isaList []isaCase, h kernelconf.Hints, p *plan.Problem) bool {
	t.Helper()
	if h == (kernelconf.Hints{}) {
		return false
	}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	for _, isa := range isaList {
		a, errA := EmitHinted(pl, h, isa.o)
		b, errB := EmitHinted(pl, kernelconf.Hints{}, isa.o)
		if (errA == nil) != (errB == nil) || !bytes.Equal(a.Text, b.Text) {
			return false
		}
	}
	return true
}

// TestNativePacedRows runs exact reductions of every exact type in every
// shape, lengths from 0 to past two vectors and rows of many blocks, and
// random exact problems, emitted under the FromMemory hint for Zen cores
// (paced row sweeps: one accumulator, two on AVX2), against the exact
// oracle and the interpreter byte for byte: those whose code the hint
// changes (hintIdle), at least one of each exact type.
func TestNativePacedRows(t *testing.T) {
	isaList := zenISAs(t)
	h := kernelconf.Hints{FromMemory: true}
	r := rand.New(rand.NewSource(55))
	ran := 0
	paced := map[dtypes.DataType]int{}
	for _, sdt := range kerneltest.ExactTypes {
		for _, n := range []int64{0, 1, 15, 17, 65, 1000, 4099} {
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				for _, s := range nativeShapes(n) {
					p := problemOf(s, sdt, c.DstDT, c.Reduction)
					sb, err := p.SrcBytes()
					if err != nil {
						t.Fatal(err)
					}
					src := make([]byte, sb)
					kerneltest.FillExact(r, sdt, src)
					if hintIdle(t, isaList, h, p) {
						continue
					}
					n := checkNativeExactHinted(t, isaList, h, p, src)
					ran += n
					paced[sdt] += n
				}
			}
		}
	}
	for _, sdt := range kerneltest.ExactTypes {
		if paced[sdt] == 0 {
			t.Errorf("no %v problem the hint changes ran machine code", sdt)
		}
	}
	for i := range 60 {
		sdt := kerneltest.ExactTypes[i%len(kerneltest.ExactTypes)]
		cs := kerneltest.ExactPairs(r, sdt)
		p := kerneltest.RandomExactProblem(r, 20000, sdt, cs[r.Intn(len(cs))])
		sb, err := p.SrcBytes()
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, sb)
		kerneltest.FillExact(r, sdt, src)
		if !hintIdle(t, isaList, h, p) {
			ran += checkNativeExactHinted(t, isaList, h, p, src)
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// TestNativePacedWideRows runs the f64 kinds in every shape emitted
// under the FromMemory hint for Zen cores (paced row sweeps: one
// accumulator, two on AVX2, an f64 sum's runs added into as many
// totals), with rows long enough that the paced sums are cut into runs
// and rows ending in a short run, against the oracle's bound; and f64
// max and min with one NaN at chosen places against the interpreter bit
// for bit (their NaN-free code checks each src vector of the paced
// loop alone).
func TestNativePacedWideRows(t *testing.T) {
	isaList := zenISAs(t)
	h := kernelconf.Hints{FromMemory: true}
	checkNativeWideShapes(t, isaList, h, []int64{17, 3000})
	checkNativeMaxMinNaNAt(t, isaList, h)
	// The sums cut into runs: more than nativeUncut adds a lane in one
	// accumulator, the last run short (8200) or whole (16384).
	r := rand.New(rand.NewSource(56))
	ran := 0
	for _, n := range []int64{8200, 16384} {
		for _, red := range []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMean.Reduction(0, 0), kerneltest.WideTransformed[1]} {
			for _, s := range [][3][]int64{{{2, n}, {n, 1}, {0, 1}}, {{2, 3, n}, {3 * n, n, 1}, {0, 1, 1}}} {
				ran += checkWideBound(t, r, isaList, h, problemOf(s, dtypes.F64, dtypes.F64, red))
			}
		}
	}
	if ran == 0 {
		t.Fatal("no plan ran machine code")
	}
}

// checkWideBound runs the f64 reduction p over random data, emitted
// under the hints h on every ISA of isaList, against the oracle's bound;
// it returns the runs made.
func checkWideBound(t *testing.T, r *rand.Rand, isaList []isaCase, h kernelconf.Hints, p *plan.Problem) int {
	t.Helper()
	sb, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, sb)
	kerneltest.FillWide(r, dtypes.F64, src, false)
	want := kerneltest.WideBounds(p, src, nil)
	return runNativeHinted(t, isaList, h, p, src, nil, func(name string, dst []byte) {
		kerneltest.CheckWideBounds(t, name, p, want, dst, 0xa5)
	})
}

// TestNativePacedRowsGate checks which native kernels are paced: the rows
// marked FromMemory under Options.Zen, as f32's are, of exact kinds and
// of f64 (a sum cut into runs too), not columns. FromMemory without Zen
// changes no code.
func TestNativePacedRowsGate(t *testing.T) {
	for _, avx512 := range []bool{false, true} {
		for _, c := range []struct {
			red     plan.Reduction
			sdt     dtypes.DataType
			columns bool
			paced   bool
		}{
			{plan.AlgSum.Reduction(0, 0), dtypes.S32, false, true},
			{plan.AlgMin.Reduction(0, 0), dtypes.S64, false, true},
			{plan.AlgMax.Reduction(0, 0), dtypes.U32, false, true},
			{plan.AlgMean.Reduction(0, 0), dtypes.S16, false, true},
			{plan.AlgSum.Reduction(0, 0), dtypes.S32, true, false},
			{plan.AlgSum.Reduction(0, 0), dtypes.F64, false, true},
			{plan.AlgMax.Reduction(0, 0), dtypes.F64, false, true},
			{plan.AlgMin.Reduction(0, 0), dtypes.F64, false, true},
			{plan.AlgSum.Reduction(0, 0), dtypes.F64, true, false},
		} {
			ddt := c.sdt
			if c.red.Finalize == plan.FinalizeMean {
				ddt = dtypes.F32
			}
			pl, err := plan.Canonicalize(twoD(c.red, c.sdt, ddt, 83, 3136, c.columns))
			if err != nil {
				t.Fatal(err)
			}
			emit := func(mem, zen bool) []byte {
				code, err := EmitHinted(pl, kernelconf.Hints{FromMemory: mem}, Options{AVX512: avx512, Zen: zen})
				if err != nil {
					t.Fatalf("%v %v: %v", c.red, c.sdt, err)
				}
				return code.Text
			}
			if !bytes.Equal(emit(false, false), emit(true, false)) {
				t.Errorf("avx512 %v, %v of %v: FromMemory without Zen changed the code", avx512, c.red, c.sdt)
			}
			if got := !bytes.Equal(emit(false, true), emit(true, true)); got != c.paced {
				t.Errorf("avx512 %v, %v of %v (columns %v): paced %v, want %v", avx512, c.red, c.sdt, c.columns, got, c.paced)
			}
		}
	}
}

// TestNativePacedRowsLoopShape checks the paced native row loop: one
// accumulator (AVX-512; two on AVX2) and the loop of f32's paced sweeps,
// which tests its counter at the top and jumps back at the end; the
// loop that is not paced adds into every accumulator (an f64 sum cut
// into runs: half of them) and ends in JNE. The f64 sum's paced loop is
// cut into runs too, each folded into its totals after the loop.
func TestNativePacedRowsLoopShape(t *testing.T) {
	for _, c := range []struct {
		dt  dtypes.DataType
		add string
		// the accumulators of the loop not paced, AVX-512 and AVX2
		plain512, plain2 int
	}{{dtypes.S32, "vpaddd", 16, 8}, {dtypes.F64, "vaddpd", 16, 4}} {
		for _, avx512 := range []bool{false, true} {
			pl, err := plan.Canonicalize(twoD(plan.AlgSum.Reduction(0, 0), c.dt, c.dt, 16, 65536, false))
			if err != nil {
				t.Fatal(err)
			}
			for _, zen := range []bool{false, true} {
				code, err := EmitHinted(pl, kernelconf.Hints{FromMemory: true}, Options{AVX512: avx512, Zen: zen})
				if err != nil {
					t.Fatal(err)
				}
				ins := disassemble(t, code.Text)
				add := slices.IndexFunc(ins, func(s string) bool { return strings.HasPrefix(s, c.add+" (%rsi)") })
				if add < 2 || add+4 > len(ins) {
					t.Fatalf("%v avx512 %v zen %v: no row loop adding from memory in\n%s", c.dt, avx512, zen, strings.Join(ins, "\n"))
				}
				end := add + slices.IndexFunc(ins[add:], func(s string) bool { return strings.HasPrefix(s, "dec") }) + 1
				adds := 0
				for _, s := range ins[add:end] {
					if strings.HasPrefix(s, c.add) {
						adds++
					}
				}
				wantAdds := c.plain512
				if !avx512 {
					wantAdds = c.plain2
				}
				if zen {
					wantAdds = 1
					if !avx512 {
						wantAdds = 2
					}
				}
				tested := strings.HasPrefix(ins[add-2], "test") && strings.HasPrefix(ins[add-1], "je") && strings.HasPrefix(ins[end], "jmp")
				plain := strings.HasPrefix(ins[end], "jne")
				if zen && !tested || !zen && !plain || adds != wantAdds {
					t.Errorf("%v avx512 %v zen %v: row loop (%d adds, want %d)\n%s", c.dt, avx512, zen, adds, wantAdds, strings.Join(ins[add-2:end+1], "\n"))
				}
				if c.dt == dtypes.F64 && zen {
					// After the run: its accumulators added into the
					// totals (registers wantAdds on) and started again.
					fold := ins[end+1 : end+1+2*wantAdds]
					for i := range wantAdds {
						if !strings.HasPrefix(fold[2*i], "vaddpd") || !strings.HasPrefix(fold[2*i+1], "vpxor") {
							t.Errorf("%v avx512 %v: no fold into the totals after the run:\n%s", c.dt, avx512, strings.Join(ins[add-2:end+1+2*wantAdds], "\n"))
							break
						}
					}
				}
			}
		}
	}
}
