package jit

import (
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// TestExpInKernel checks that an Exp post-op is machine code on every JIT
// ISA (no post-op pass, nothing on the interpreter) and agrees with the
// interpreter within vexp.Near (any NaN matching any NaN), every output
// of every dst type. The problems reduce nothing, so the value reaching
// Exp is the same on both sides and only the exp itself may differ.
func TestExpInKernel(t *testing.T) {
	checkInKernel(t, ops.Exp, -110, 95, 61)
}

// TestLogInKernel is TestExpInKernel for Log (vlog.MaxULP is
// vexp.MaxULP, so vexp.Near holds its results too), over inputs of both
// signs (negative ones give a NaN) and near 1.
func TestLogInKernel(t *testing.T) {
	checkInKernel(t, ops.Log, -1, 8, 65)
}

// checkInKernel runs a post-op of kind alone on src values in [lo, hi]
// drawn from seed (see TestExpInKernel).
func checkInKernel(t *testing.T, kind ops.Kind, lo, hi float32, seed uint64) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		withBudget(t, 4096)
		r := rand.New(rand.NewPCG(seed, seed+1))
		for _, dts := range [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16},
			{dtypes.F16, dtypes.F32}, {dtypes.F32, dtypes.F16}} {
			c := spec{dims: []int64{37, 301}, reduce: []bool{false, false}, sdt: dts[0], ddt: dts[1], lo: lo, hi: hi,
				post: []plan.PostOp{{Kind: kind}}}.build(t, r)
			k := c.compile(t)
			if k.dec.postpass || k.Impl() != "jit:"+isa.String() || k.Why() != "" {
				t.Fatalf("%v: %s, Impl %s, Why %q: want %v in the kernel", dts, k.schedule(), k.Impl(), k.Why(), kind)
			}
			got := c.newDst()
			if err := k.Run(c.src, got, c.bins); err != nil {
				t.Fatal(err)
			}
			want := c.newDst()
			if err := interp.Run(k.Plan(), c.src, want, c.bins); err != nil {
				t.Fatal(err)
			}
			sz := int64(dts[1].Size())
			for off := range reference(c) {
				g, w := got[off*sz:(off+1)*sz], want[off*sz:(off+1)*sz]
				gv, wv := oracle.Get(dts[1], got, off), oracle.Get(dts[1], want, off)
				if string(g) != string(w) && !vexp.Near(dts[1], g, w) && !(gv != gv && wv != wv) {
					t.Fatalf("%v: dst[%d] = %v, interpreter %v", dts, off, gv, wv)
				}
			}
		}
	})
}

// TestLogSumExpIsMachineCode checks that every phase of a log-sum-exp
// runs as machine code on every JIT ISA: the unshifted pass, the max, the
// exp, the sum with its Log and Add, and the copy into dst (the post-op
// pass of lse.go's P), the data making both the unshifted and the shifted
// phases run.
func TestLogSumExpIsMachineCode(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		withBudget(t, 4096)
		c := spec{dims: []int64{40, 300}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
			lo: -30, hi: 60}.build(t, rand.New(rand.NewPCG(63, 64)))
		c.p.Reduction = plan.LogSumExp
		k := c.compile(t)
		if !k.dec.lse || k.Impl() != "jit:"+isa.String() || k.Why() != "" {
			t.Fatalf("%s, Impl %s, Why %q: want machine code", k.schedule(), k.Impl(), k.Why())
		}
		for i, u := range k.units {
			if e := u.e.Load(); e == nil || e.code == nil {
				t.Errorf("sub-plan %d (%s, post-op pass %v) is not machine code: %s", i, u.pl, k.dec.post[i], k.Why())
			}
		}
		dst := c.newDst()
		if err := k.Run(c.src, dst, nil); err != nil {
			t.Fatal(err)
		}
		checkRef(t, c, dst, "log-sum-exp "+isa.String())
	})
}
