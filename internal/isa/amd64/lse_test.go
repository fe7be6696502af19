package amd64

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestUnshiftedLogSumExp runs random unshifted log-sum-exp plans (ranks
// 0-6, dims with vector-width edges, permuted and padded strides, every
// float and 8-bit src type) on every ISA, whole and in blocks, and as the
// stages of a split reduction, against float64.
func TestUnshiftedLogSumExp(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	r := rand.New(rand.NewSource(21))
	for i := 0; i < n; i++ {
		checkUnshiftedProblem(t, r, kerneltest.UnshiftedStages[i%3])
	}
}

// checkUnshiftedProblem runs one random unshifted log-sum-exp problem of
// stage st on every ISA, whole and in blocks.
func checkUnshiftedProblem(t *testing.T, r *rand.Rand, st plan.Stage) {
	t.Helper()
	p := randProblem(r, 3000)
	pl := kerneltest.UnshiftedPlan(t, p, st)
	src, _, _ := buffers(t, r, p, false)
	kerneltest.FillUnshifted(r, st, p.SrcDT, src)
	db, _ := p.DstBytes()
	for _, isa := range isas(t) {
		k := compile(t, pl, isa.o)
		blocks := []int64{0}
		if len(pl.Outer) > 0 && pl.Outer[0].Size > 1 {
			blocks = append(blocks, 1+r.Int63n(pl.Outer[0].Size))
		}
		kerneltest.CheckUnshiftedBlocks(t, isa.name, k, pl, p, src, db, blocks)
		k.Release()
	}
}

// FuzzUnshiftedLogSumExp drives TestUnshiftedLogSumExp from
// fuzzer-chosen seeds and stages.
func FuzzUnshiftedLogSumExp(f *testing.F) {
	for _, s := range []int64{1, 2, 3} {
		f.Add(s, uint8(s))
	}
	f.Fuzz(func(t *testing.T, seed int64, stage uint8) {
		r := rand.New(rand.NewSource(seed))
		checkUnshiftedProblem(t, r, kerneltest.UnshiftedStages[int(stage)%3])
	})
}

// TestUnshiftedLogSumExpGuardPages runs every kernel shape of an
// unshifted log-sum-exp with tails of 0..2V+1 (guardTail) next to guard
// pages, src and dst at a page's end and at its start: no exp may read
// past src, and no lane past a tail may be summed (exp turns its zero
// into a 1).
func TestUnshiftedLogSumExpGuardPages(t *testing.T) {
	tgs := targets(t)
	r := rand.New(rand.NewSource(22))
	for tail := int64(0); tail <= 33; tail++ {
		if !guardTail(tail) {
			continue
		}
		for _, sdt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8} {
			for _, p := range guardShapes(tail, sdt, dtypes.F32) {
				pl := kerneltest.UnshiftedPlan(t, p, plan.Unshifted)
				src0, _, _ := buffers(t, r, p, false)
				kerneltest.FillUnshifted(r, pl.Stage, sdt, src0)
				db, _ := p.DstBytes()
				kerneltest.CheckUnshiftedFenced(t, fmt.Sprintf("tail %d: ", tail), tgs, pl, p, src0, db, []int64{0})
			}
		}
	}
}

// TestUnshiftedLogSumExpPrefetches checks that row and column kernels
// whose elements go through exp prefetch src ahead (rowPrefetch,
// colBlock; an AVX-512 column block intelTuning.pfRowsBusy rows ahead), on both ISAs,
// except rows on Zen cores, and that the same plans as sums do not; and
// that on AVX-512 their exp reads its constants from registers
// (placeSumExp), not memory.
func TestUnshiftedLogSumExpPrefetches(t *testing.T) {
	for _, a := range []struct {
		dims   []int64
		axes   []int
		rowsPf string // a prefetch of the column block's first line, "" for rows
	}{{[]int64{64, 3136}, []int{1}, ""}, {[]int64{3136, 256}, []int{0}, fmt.Sprintf("prefetcht0 %#x(%%rsi)", intelTuning.pfRowsBusy*256*4)}} {
		for _, lse := range []bool{true, false} {
			pl, err := plan.Canonicalize(kerneltest.DenseProblem(a.dims, a.axes, dtypes.F32))
			if err != nil {
				t.Fatal(err)
			}
			pl.Reduction = plan.AlgSum.Reduction(0, 0)
			if lse {
				pl.Reduction, pl.Stage = plan.LogSumExp, plan.Unshifted
			}
			for _, o := range []Options{{AVX512: true}, {}, {AVX512: true, Zen: true}, {Zen: true}} {
				code, err := Emit(pl, o)
				if err != nil {
					t.Fatal(err)
				}
				// The exp's polynomial runs from its VREDUCEPS to its
				// VSCALEFPS.
				n, memFMAs, ahead, inExp := 0, 0, false, false
				for _, l := range disassemble(t, code.Text) {
					if strings.HasPrefix(l, "prefetcht0") {
						n++
					}
					inExp = strings.HasPrefix(l, "vreduceps") || inExp && !strings.HasPrefix(l, "vscalefps")
					if inExp && strings.HasPrefix(l, "vfmadd") && strings.Contains(l, "(%") {
						memFMAs++
					}
					ahead = ahead || l == a.rowsPf
				}
				if want := lse && (a.rowsPf != "" || !o.Zen); (n > 0) != want {
					t.Errorf("%v over %v, %+v, %v: %d prefetches", a.dims, a.axes, o, pl.Reduction, n)
				}
				if lse && o.AVX512 && a.rowsPf != "" && !ahead {
					t.Errorf("%v over %v, AVX-512 %v: no %q", a.dims, a.axes, o.AVX512, a.rowsPf)
				}
				if lse && o.AVX512 && memFMAs > 0 {
					t.Errorf("%v over %v: the exp reads %d constants from memory", a.dims, a.axes, memFMAs)
				}
			}
		}
	}
}

// TestUnshiftedLogSumExpRowByRow runs log-sum-exp's unshifted sums of exp
// row by row (the stage-1 chunks that Zen cores take) on every ISA with
// Options.Zen: every float src type, widths around the vector and
// loop-chunk sizes, back-to-back and padded rows, and src and dst against
// guard pages at either end, against float64 (kerneltest.CheckUnshifted).
func TestUnshiftedLogSumExpRowByRow(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	st := plan.Unshifted | plan.SkipFinalize
	for _, sdt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
		for _, w := range []int64{1, 7, 9, 16, 17, 31, 65, 100, 129, 1000} {
			for _, rows := range []int64{1, 2, 5, 64} {
				for _, pad := range []int64{0, 3} {
					stride := w + pad
					pl := rowByRowPlan(sdt, rows, stride, w)
					pl.Reduction, pl.Stage = plan.LogSumExp, st
					p := &plan.Problem{SrcDT: sdt, DstDT: dtypes.F32, Dims: []int64{rows, w}, SrcStrides: []int64{stride, 1},
						Reduce: []bool{true, false}, DstStrides: []int64{0, 1}, Reduction: plan.LogSumExp}
					src0 := make([]byte, ((rows-1)*stride+w)*int64(sdt.Size()))
					kerneltest.FillUnshifted(r, st, sdt, src0)
					for _, atEnd := range []bool{true, false} {
						fence := kerneltest.NewFence(t, atEnd)
						src, dst := fence.Place(src0), fence.Place(make([]byte, w*4))
						for _, isa := range isas(t) {
							o := isa.o
							o.Zen = true
							k := compileHinted(t, pl, byRow, o)
							k.RunBlocks(pl, src, dst, nil, 0)
							k.Release()
							what := fmt.Sprintf("%v rows %d of %d, stride %d, %s, zen, guard at end %v", sdt, rows, w, stride, isa.name, atEnd)
							kerneltest.CheckUnshifted(t, what, pl, p, src, dst)
						}
						fence.Free()
					}
				}
			}
		}
	}
}
