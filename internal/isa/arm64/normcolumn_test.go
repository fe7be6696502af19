package arm64

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestPrefetchL2Encoding checks PRFM PLDL2KEEP as the assembler encodes
// it against the ARM ARM's PRFM (immediate) word (0xf9800000 | imm12<<10
// | Rn<<5 | Rt, with Rt 0b00010 for PLDL2KEEP and imm12 the offset / 8)
// and against binutils' reading, for offsets the scaled field holds and
// ones that go through R17.
func TestPrefetchL2Encoding(t *testing.T) {
	prfm := func(rn int, off int64) uint32 { return 0xf9800000 | uint32(off/8)<<10 | uint32(rn)<<5 | 2 }
	for _, c := range []struct {
		r     int16
		off   int64
		words []uint32 // the ARM ARM's encoding
		text  []string // objdump's
	}{
		{rSrc, 0, []uint32{prfm(1, 0)}, []string{"prfm pldl2keep, [x1]"}},
		{rSrc, 64, []uint32{prfm(1, 64)}, []string{"prfm pldl2keep, [x1, #64]"}},
		{rDst, 32760, []uint32{prfm(2, 32760)}, []string{"prfm pldl2keep, [x2, #32760]"}},
		// Not a multiple of 8, negative, past the field: the address in
		// R17 (ADD or SUB immediate, ARM ARM: 0x91000000 / 0xd1000000 |
		// imm12<<10 | Rn<<5 | Rd).
		{rSrc, 100, []uint32{0x91000000 | 100<<10 | 1<<5 | 17, prfm(17, 0)}, []string{"add x17, x1, #0x64", "prfm pldl2keep, [x17]"}},
		{rDst, -64, []uint32{0xd1000000 | 64<<10 | 2<<5 | 17, prfm(17, 0)}, []string{"sub x17, x2, #0x40", "prfm pldl2keep, [x17]"}},
		{rDst, 32768, []uint32{0x91400000 | 8<<10 | 2<<5 | 17, prfm(17, 0)}, []string{"add x17, x2, #0x8, lsl #12", "prfm pldl2keep, [x17]"}},
	} {
		g := newGen(&plan.Plan{})
		g.prefetchL2(at(c.r, c.off))
		g.ret()
		code, err := g.Text()
		if err != nil {
			t.Fatalf("offset %d: %v", c.off, err)
		}
		got := code[:4*len(c.words)]
		for i, w := range c.words {
			if gw := binary.LittleEndian.Uint32(got[4*i:]); gw != w {
				t.Errorf("x%d offset %d: word %d is %08x, want %08x", c.r-rSrc+1, c.off, i, gw, w)
			}
		}
		ins := disassemble(t, got)
		for i, want := range c.text {
			if ins[i].text != want {
				t.Errorf("x%d offset %d: instruction %d disassembles to %q, want %q", c.r-rSrc+1, c.off, i, ins[i].text, want)
			}
		}
	}
}

// TestNormColumnsPrefetch checks that the column softmax kernel
// prefetches into the L2 (kernelshape.NormColumnPrefetcher) the lines of
// a tile normColumnAhead tiles ahead, in both sweeps.
func TestNormColumnsPrefetch(t *testing.T) {
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{2, 64, 4096}, Reduce: []bool{false, true, false},
		SrcStrides: []int64{64 * 4096, 4096, 1}, DstStrides: []int64{64 * 4096, 4096, 1}})
	if err != nil {
		t.Fatal(err)
	}
	pl.Reduced[0].DstStride = 4096
	code, err := EmitNorm(&kernelshape.Norm{Kind: kernelshape.NormSoftmax, Plan: pl})
	if err != nil {
		t.Fatal(err)
	}
	var src, dst int
	for _, in := range disassemble(t, code.Text) {
		if !strings.HasPrefix(in.text, "prfm pldl2keep, [x") {
			continue
		}
		switch {
		case strings.HasPrefix(in.text, "prfm pldl2keep, [x1,"):
			src++
		case strings.HasPrefix(in.text, "prfm pldl2keep, [x2,"):
			dst++
		}
	}
	if src == 0 || dst == 0 {
		t.Errorf("column softmax kernel: %d src and %d dst L2 prefetches, want some of each", src, dst)
	}
}

// TestNormColumnsStage checks that the column softmax kernel loads the
// stage's address (plan.NormArgs.Stage) where a tile's rows fit the
// stage, and not where they do not or for a norm
// (kernelshape.NormColumnStager), and that its Code says so (Staged).
func TestNormColumnsStage(t *testing.T) {
	for _, c := range []struct {
		C      int64
		staged bool
	}{{21, true}, {64, true}, {1000, false}} {
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{2, c.C, 4096}, Reduce: []bool{false, true, false},
			SrcStrides: []int64{c.C * 4096, 4096, 1}, DstStrides: []int64{c.C * 4096, 4096, 1}})
		if err != nil {
			t.Fatal(err)
		}
		pl.Reduced[0].DstStride = 4096
		for _, k := range []kernelshape.NormKind{kernelshape.NormSoftmax, kernelshape.NormLogSoftmax, kernelshape.NormLayer, kernelshape.NormL2} {
			// Only softmax stages; the norms read src again.
			staged := c.staged && (k == kernelshape.NormSoftmax || k == kernelshape.NormLogSoftmax)
			code, err := EmitNorm(&kernelshape.Norm{Kind: k, Plan: pl, StreamDst: true})
			if err != nil {
				t.Fatal(err)
			}
			loads := 0
			want := fmt.Sprintf(", [x0, #%d]", plan.ArgStage)
			for _, in := range disassemble(t, code.Text) {
				if strings.HasPrefix(in.text, "ldr x") && strings.HasSuffix(in.text, want) {
					loads++
				}
			}
			if (loads == 1) != staged || loads > 1 || code.Staged != staged {
				t.Errorf("kind %v, %d channels: %d loads of the stage's address, Code.Staged %v, want staged %v", k, c.C, loads, code.Staged, staged)
			}
		}
	}
}
