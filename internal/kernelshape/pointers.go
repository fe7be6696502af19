package kernelshape

// Pointers tracks the pointer registers a kernel walks (src, dst and the
// binary operands) and the moves not yet emitted for them: register r
// logically points Pending(r) bytes past where it physically points.
// Emitters fold the pending move into memory displacements and emit it
// only at labels and jumps, so that a loop's rewind merges with whatever
// move follows and every loop iteration starts with nothing pending.
type Pointers struct {
	regs []int16 // src, dst, binary operands: the flush order
	pend map[int16]int64
}

// NewPointers returns the pointers src, dst and bins, nothing pending.
func NewPointers(src, dst int16, bins []int16) *Pointers {
	regs := append([]int16{src, dst}, bins...)
	return &Pointers{regs: regs, pend: map[int16]int64{}}
}

// Regs lists the pointer registers: src, dst, then the binary operands.
func (p *Pointers) Regs() []int16 { return p.regs }

// Pending returns r's move not yet emitted, in bytes (0 for a register
// that is not a pointer).
func (p *Pointers) Pending(r int16) int64 { return p.pend[r] }

// Bump moves r by d bytes, lazily.
func (p *Pointers) Bump(r int16, d int64) { p.pend[r] += d }

// Take returns r's pending move and forgets it: the caller emits it.
func (p *Pointers) Take(r int16) int64 {
	d := p.pend[r]
	p.pend[r] = 0
	return d
}

// Advance moves every pointer by k iterations of s, lazily.
func (p *Pointers) Advance(s Steps, k int64) {
	p.Bump(p.regs[0], s.Src*k)
	p.Bump(p.regs[1], s.Dst*k)
	for i, r := range p.regs[2:] {
		p.Bump(r, s.Bin[i]*k)
	}
}

// Each calls f(r, d) for every pointer r, in the order of Regs, with d
// its move in steps s.
func (p *Pointers) Each(s Steps, f func(r int16, d int64)) {
	f(p.regs[0], s.Src)
	f(p.regs[1], s.Dst)
	for i, r := range p.regs[2:] {
		f(r, s.Bin[i])
	}
}

// Flush calls add(r, d) for every pointer r with a pending move d != 0,
// in the order of Regs so that the code is deterministic, and forgets
// the moves.
func (p *Pointers) Flush(add func(r int16, d int64)) {
	for _, r := range p.regs {
		if d := p.Take(r); d != 0 {
			add(r, d)
		}
	}
}
