package jit

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestExactRuntime runs exact plans (integer and boolean data) through
// the runtime: its blocks and single calls, at one and two threads, with
// src and dst against guard pages, checked against the exact oracle.
// Those the native kernel takes run as machine code, the others in the
// interpreter (Why says so).
func TestExactRuntime(t *testing.T) {
	freshCache(t)
	withBudget(t, 2048) // small shapes take the blocked paths
	r := rand.New(rand.NewSource(7))
	fence := kerneltest.NewFence(t, true)
	defer fence.Free()
	splits := map[string]int{}
	defer func() {
		// The budget is small enough that every split exact plans take
		// is taken (no tiles: an Inner run is read whole, see decompose).
		for _, s := range []string{"single", "blocks", "2stage"} {
			if splits[s] == 0 {
				t.Errorf("no exact plan was split as %q (splits: %v)", s, splits)
			}
		}
	}()
	for _, sdt := range kerneltest.ExactTypes {
		for range 6 {
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				p := kerneltest.RandomExactProblem(r, 20000, sdt, c)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				k, err := Compile(pl)
				if err != nil {
					t.Fatalf("%v: %v", pl, err)
				}
				splits[k.dec.split]++
				if pl.Outputs > 0 && plan.IsExact(pl.SrcDT, pl.Reduction) {
					checkNativeImpl(t, pl, k)
				}
				src, dst0, _ := kerneltest.Buffers(t, p, 0x5a, func(dt dtypes.DataType, b []byte) { kerneltest.FillExact(r, dt, b) }, nil)
				for _, threads := range []int{1, 2} {
					withThreads(t, threads)
					fs, fd := fence.Place(src), fence.Place(dst0)
					if err := k.Run(fs, fd, nil); err != nil {
						t.Fatalf("%v: %v", pl, err)
					}
					kerneltest.CheckExact(t, fmt.Sprintf("%v %v threads %d", pl, c, threads), p, src, fd, 0x5a)
				}
			}
		}
	}
}

// TestExactFromMemory runs exact plans with every plan marked FromMemory
// (the size bound lifted) on every ISA, at one and two threads, against
// the exact oracle: on a paced core (AMD Zen) the native kernel's row
// sweeps are then paced (kernelshape.NativePacer); elsewhere the marks
// must change nothing.
func TestExactFromMemory(t *testing.T) {
	withSizeBound(t, &fromMemoryBytes, 0)
	t.Logf("paced core: %v", cpuFeatures().zen)
	forEachISA(t, func(t *testing.T) {
		freshCache(t)
		withBudget(t, 2048)
		r := rand.New(rand.NewSource(8))
		for _, sdt := range kerneltest.ExactTypes {
			for range 3 {
				for _, c := range kerneltest.ExactPairs(r, sdt) {
					p := kerneltest.RandomExactProblem(r, 20000, sdt, c)
					pl, err := plan.Canonicalize(p)
					if err != nil {
						t.Fatal(err)
					}
					k, err := Compile(pl)
					if err != nil {
						t.Fatalf("%v: %v", pl, err)
					}
					src, dst, _ := kerneltest.Buffers(t, p, 0x5a, func(dt dtypes.DataType, b []byte) { kerneltest.FillExact(r, dt, b) }, nil)
					for _, threads := range []int{1, 2} {
						withThreads(t, threads)
						got := append([]byte(nil), dst...)
						if err := k.Run(src, got, nil); err != nil {
							t.Fatalf("%v: %v", pl, err)
						}
						kerneltest.CheckExact(t, fmt.Sprintf("%v %v threads %d", pl, c, threads), p, src, got, 0x5a)
					}
				}
			}
		}
	})
}

// BenchmarkExactAnchors times the sum, max and min of f64, s32 and s64
// data beside f32's on the anchor shapes B, C, D, E, G and H, and beside
// f32's over as many bytes as the 64-bit types read (f32x2), at each of
// benchThreads: f32 in its own kernels, f64 and the integers in the
// native kernel (the interpreter's where the ISA has none). Bytes per op
// are src plus dst, so that MB/s compares with readbw's at the same
// bytes.
func BenchmarkExactAnchors(b *testing.B) {
	for _, a := range kerneltest.Anchors {
		if !strings.Contains("BCDEGH", a.Name) {
			continue
		}
		// f32x2 is f32 over the shape with its first reduced axis twice
		// as long: the bytes of the 64-bit types' src.
		double := append([]int64(nil), a.Dims...)
		double[a.Axes[0]] *= 2
		for _, c := range []struct {
			name string
			dt   dtypes.DataType
			dims []int64
		}{{"f32", dtypes.F32, a.Dims}, {"f64", dtypes.F64, a.Dims}, {"s32", dtypes.S32, a.Dims}, {"s64", dtypes.S64, a.Dims},
			{"f32x2", dtypes.F32, double}} {
			dt := c.dt
			var src, dst []byte
			for _, kind := range []plan.Alg{plan.AlgSum, plan.AlgMax, plan.AlgMin} {
				p := kerneltest.DenseProblem(c.dims, a.Axes, dt)
				p.Reduction = kind.Reduction(0, 0)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					b.Fatal(err)
				}
				for _, th := range benchThreads() {
					b.Run(fmt.Sprintf("%s/%s/%v/t%d", a.Name, c.name, kind, th), func(b *testing.B) {
						withThreads(b, th)
						if src == nil {
							sb, _ := p.SrcBytes()
							db, _ := p.DstBytes()
							src, dst = make([]byte, sb), make([]byte, db)
							for i := range src {
								src[i] = byte(i * 7 % 13) // small values of every type
							}
						}
						k, err := Compile(pl)
						if err != nil {
							b.Fatal(err)
						}
						b.SetBytes(int64(len(src) + len(dst)))
						var calls []time.Duration
						b.ResetTimer()
						for range b.N {
							t0 := time.Now()
							if err := k.Run(src, dst, nil); err != nil {
								b.Fatal(err)
							}
							calls = append(calls, time.Since(t0))
						}
						reportCallTimes(b, calls)
					})
				}
			}
		}
	}
}

// BenchmarkNativeOrInterp runs exact reductions that once ran in the
// interpreter on some ISA, beside the interpreter itself, in one thread:
// "jit" is the compiled kernel (machine code where the ISA's native
// kernel takes the plan), "interp" the interpreter's typed loop on the
// same plan. A row shape (the reduced axis innermost) and a column shape
// (the kept axis innermost), 256Ki elements each.
func BenchmarkNativeOrInterp(b *testing.B) {
	for _, c := range []struct {
		name string
		dt   dtypes.DataType
		alg  plan.Alg
	}{{"s64-prod", dtypes.S64, plan.AlgMul}, {"s32-mean", dtypes.S32, plan.AlgMean}, {"s64-mean", dtypes.S64, plan.AlgMean}} {
		for _, s := range []struct {
			name string
			dims []int64
			axes []int
		}{{"row", []int64{64, 4096}, []int{1}}, {"column", []int64{4096, 64}, []int{0}}} {
			p := kerneltest.DenseProblem(s.dims, s.axes, c.dt)
			p.Reduction = c.alg.Reduction(0, 0)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				b.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			src, dst := make([]byte, sb), make([]byte, db)
			for i := range src {
				src[i] = byte(i * 7 % 13)
			}
			k, err := Compile(pl)
			if err != nil {
				b.Fatal(err)
			}
			for _, impl := range []string{"interp", "jit"} {
				b.Run(fmt.Sprintf("%s/%s/impl=%s", c.name, s.name, impl), func(b *testing.B) {
					withThreads(b, 1)
					if impl == "jit" && k.Impl() == "interp" {
						b.Logf("%v runs in the interpreter: %s", pl, k.Why())
					}
					b.SetBytes(int64(sb + db))
					var calls []time.Duration
					b.ResetTimer()
					for range b.N {
						t0 := time.Now()
						var err error
						if impl == "jit" {
							err = k.Run(src, dst, nil)
						} else {
							err = interp.Run(pl, src, dst, nil)
						}
						if err != nil {
							b.Fatal(err)
						}
						calls = append(calls, time.Since(t0))
					}
					reportCallTimes(b, calls)
				})
			}
		}
	}
}

// checkNativeImpl checks that k, compiled from the exact or f64 plan pl,
// runs machine code where the native kernel of its ISA takes pl (its
// Covers.Native; an ISA with no native kernel, none), else the
// interpreter, saying why.
func checkNativeImpl(t *testing.T, pl *plan.Plan, k *Kernel) {
	t.Helper()
	native := k.ISA() != None && coverage(k.ISA()).TakesNative(pl)
	if native && k.Impl() != "jit:"+k.ISA().String() {
		t.Errorf("%v: impl %q, why %q; want machine code", pl, k.Impl(), k.Why())
	}
	if !native && (k.Impl() != "interp" || k.Why() == "") {
		t.Errorf("%v: impl %q, why %q; want the interpreter, saying why", pl, k.Impl(), k.Why())
	}
}
