package bench

import (
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/layout"
)

// blockedMem is the memory of a src or dst in a blocked layout. The
// harness fills, references and compares a plain copy of the tensor
// (built.src, built.outs) as it does for every layout; the partition
// reads and writes mem, the blocked one. As in benchdnn, whose blocked
// inputs come from a reorder of plain data, src padding holds zeros.
type blockedMem struct {
	lt   graph.LogicalTensor // the blocked tensor the partition takes
	desc layout.Desc
	mem  [2]buffer // src: [0]; dst: one per output buffer
}

// newBlockedMem describes lt (a blocked tensor with known dims).
func newBlockedMem(lt graph.LogicalTensor) (*blockedMem, error) {
	l, err := layout.Parse(lt.Tag, len(lt.Dims))
	if err != nil {
		return nil, err
	}
	d, err := l.Desc(lt.Dims)
	if err != nil {
		return nil, err
	}
	return &blockedMem{lt: lt, desc: d}, nil
}

// alloc allocates mem[i].
func (m *blockedMem) alloc(i int) error {
	var err error
	m.mem[i], err = newBuffer(m.lt.DataType, m.desc.Span())
	return err
}

// eachLogical calls f with the offset of every logical element in the
// blocked memory and in a plain tensor of the given strides.
func (m *blockedMem) eachLogical(plainStrides []int64, f func(blk, plain int64)) {
	dims := m.desc.Dims
	for _, d := range dims {
		if d == 0 {
			return
		}
	}
	idx := make([]int64, len(dims))
	for {
		p := int64(0)
		for i, x := range idx {
			p += x * plainStrides[i]
		}
		f(m.desc.Offset(idx), p)
		i := len(dims) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// scatter writes the plain tensor's elements into mem[0] and zeros into
// its padding.
func (m *blockedMem) scatter(plain buffer, strides []int64) {
	b := m.mem[0]
	for i := range m.desc.Span() {
		b.set(i, 0)
	}
	m.eachLogical(strides, func(blk, p int64) { b.set(blk, plain.get(p)) })
}

// gather copies mem[i]'s logical elements into the plain tensor and
// returns how many padding positions are not zero (oneDNN keeps a
// blocked output's padding zero).
func (m *blockedMem) gather(i int, plain buffer, strides []int64) int64 {
	b := m.mem[i]
	logical := make([]bool, m.desc.Span())
	m.eachLogical(strides, func(blk, p int64) {
		plain.set(p, b.get(blk))
		logical[blk] = true
	})
	bad := int64(0)
	for j, ok := range logical {
		if !ok && b.bits(int64(j)) != 0 {
			bad++
		}
	}
	return bad
}
