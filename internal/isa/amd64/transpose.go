package amd64

import (
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Transposed reduction: V registers of partial sums in, one register out
// whose lane j holds the full sum of one input. Each level pairs the
// registers and, with two shuffles and one add, halves both the register
// count and the lanes each input occupies: 512->256 bits (VSHUFF32X4 or
// VPERM2F128), 256->128 (VSHUFF32X4, zmm only), then two VSHUFPS levels
// inside 128-bit lanes. V inputs cost (V-1) * 3 instructions instead of
// V horizontal sums of 2*log2(V) each, and the result is a vector, so
// the epilogue of V outputs is vectorised too.

// tlevel is one level: dst1 = shuf(imm1, a, b), dst2 = shuf(imm2, a, b),
// result = dst1 + dst2.
type tlevel struct {
	as         obj.As
	imm1, imm2 int64
}

// transposeLevels lists the levels for V lanes.
func transposeLevels(V int) []tlevel {
	if V == 16 {
		return []tlevel{
			{x86.AVSHUFF32X4, 0x44, 0xEE}, // [a01 b01], [a23 b23] (128-bit chunks)
			{x86.AVSHUFF32X4, 0x88, 0xDD}, // [a0 a2 b0 b2], [a1 a3 b1 b3]
			{x86.AVSHUFPS, 0x44, 0xEE},    // in each chunk: [a0 a1 b0 b1], [a2 a3 b2 b3]
			{x86.AVSHUFPS, 0x88, 0xDD},    // [a0 a2 b0 b2], [a1 a3 b1 b3]
		}
	}
	return []tlevel{
		{x86.AVPERM2F128, 0x20, 0x31}, // [a.lo b.lo], [a.hi b.hi]
		{x86.AVSHUFPS, 0x44, 0xEE},
		{x86.AVSHUFPS, 0x88, 0xDD},
	}
}

// shuffleSim computes what the level's shuffle does to lane contents.
func shuffleSim(as obj.As, imm int64, a, b []int) []int {
	V := len(a)
	d := make([]int, V)
	switch as {
	case x86.AVSHUFF32X4:
		for c := 0; c < 4; c++ {
			src := a
			if c >= 2 {
				src = b
			}
			s := int(imm>>(2*c)) & 3
			copy(d[4*c:4*c+4], src[4*s:4*s+4])
		}
	case x86.AVPERM2F128:
		for h := 0; h < 2; h++ {
			sel := int(imm>>(4*h)) & 3
			src := a
			if sel >= 2 {
				src = b
			}
			s := sel & 1
			copy(d[4*h:4*h+4], src[4*s:4*s+4])
		}
	case x86.AVSHUFPS:
		for base := 0; base < V; base += 4 {
			d[base] = a[base+int(imm)&3]
			d[base+1] = a[base+int(imm>>2)&3]
			d[base+2] = b[base+int(imm>>4)&3]
			d[base+3] = b[base+int(imm>>6)&3]
		}
	}
	return d
}

// transposeOrder returns, for each lane of the result, the input position
// whose sum it holds. ok is false if the levels do not transpose (a
// shuffle pairing lanes of different inputs), which tests check.
func transposeOrder(V int) (order []int, ok bool) {
	levels := transposeLevels(V)
	regs, ok := levelLanes(V, len(levels))
	if !ok || len(regs) != 1 {
		return nil, false
	}
	seen := make([]bool, V)
	for _, p := range regs[0] {
		if seen[p] {
			return nil, false
		}
		seen[p] = true
	}
	return regs[0], true
}

// levelLanes runs the first n levels over V registers whose lanes are
// labelled with their input position, and returns the labels of the
// registers left (register i at index i, as transposeFrom numbers them).
// ok is false if a shuffle pairs lanes of different inputs.
func levelLanes(V, n int) (regs [][]int, ok bool) {
	regs = make([][]int, V)
	for p := range regs {
		regs[p] = make([]int, V)
		for l := range regs[p] {
			regs[p][l] = p
		}
	}
	for _, lv := range transposeLevels(V)[:n] {
		var next [][]int
		for i := 0; i+1 < len(regs); i += 2 {
			t1 := shuffleSim(lv.as, lv.imm1, regs[i], regs[i+1])
			t2 := shuffleSim(lv.as, lv.imm2, regs[i], regs[i+1])
			for l := range t1 {
				if t1[l] != t2[l] {
					return nil, false
				}
			}
			next = append(next, t1)
		}
		regs = next
	}
	return regs, true
}

// laneBlock is where one input's partial sums sit after some levels:
// lanes lo..lo+width-1 of register reg.
type laneBlock struct {
	reg, lo, width int
}

// packedBlocks returns, for each input position, its lane block after
// the first skip levels. An input no wider than its block can be loaded
// straight there, skipping those levels: the levels only ever add a
// lane to another of the same input, and lanes past a short row hold
// +0, so the sums are the same bits. ok is false if some input's lanes
// are not one contiguous run.
func packedBlocks(V, skip int) (blocks []laneBlock, ok bool) {
	regs, ok := levelLanes(V, skip)
	if !ok {
		return nil, false
	}
	blocks = make([]laneBlock, V)
	seen := make([]bool, V)
	for q, lanes := range regs {
		for l := 0; l < len(lanes); {
			p, w := lanes[l], 1
			for l+w < len(lanes) && lanes[l+w] == p {
				w++
			}
			if seen[p] {
				return nil, false
			}
			seen[p] = true
			blocks[p] = laneBlock{reg: q, lo: l, width: w}
			l += w
		}
	}
	return blocks, true
}

// transposeFrom emits the levels from level skip on, over the V>>skip
// registers in regs laid out as those levels expect (see packedBlocks).
func (g *gen) transposeFrom(regs []int, skip int) int {
	mk := g.Mark()
	t := g.Tmp()
	cur := append([]int(nil), regs...)
	for _, lv := range transposeLevels(g.V)[skip:] {
		var next []int
		for i := 0; i+1 < len(cur); i += 2 {
			a, b := cur[i], cur[i+1]
			g.op(lv.as, imm(lv.imm1), g.vr(b), g.vr(a), g.vr(t))
			g.op(lv.as, imm(lv.imm2), g.vr(b), g.vr(a), g.vr(b))
			g.combineTo(a, t, b)
			next = append(next, a)
		}
		cur = next
	}
	g.Release(mk)
	return cur[0]
}
