// Package layout reads oneDNN memory format tags ("abx", "acdb",
// "aBx16b", "ABcd32a16b", "nChw16c", ...) and turns them, for concrete
// dims, into a Desc: where each logical element lives in memory.
//
// The grammar is oneDNN's: a lowercase letter is a plain dim ('a' is dim
// 0), an uppercase letter is the outer part of a blocked dim, and the
// inner blocks follow as <size><letter> (the letter of a dim the outer
// part names in uppercase), outermost first. 'x' stands for every dim the
// tag does not name, in increasing order, so that one tag serves several
// ranks ("aBx16b" is "aB16b", "aBc16b", "aBcd16b", ... by rank).
//
// A blocked dim of size D and block b occupies ceil(D/b)*b positions in
// memory: the positions D..ceil(D/b)*b-1 are padding, which oneDNN keeps
// out of every computation and keeps zero in outputs.
package layout

import (
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// aliases maps oneDNN's named format tags to their letter form.
var aliases = map[string]string{
	"x": "a", "nc": "ab", "cn": "ba", "tn": "ab", "nt": "ba", "ncw": "abc", "nwc": "acb",
	"nchw": "abcd", "nhwc": "acdb", "chwn": "bcda", "ncdhw": "abcde", "ndhwc": "acdeb",
	"tnc": "abc", "ntc": "bac",
	"nCw4c": "aBc4b", "nCw8c": "aBc8b", "nCw16c": "aBc16b",
	"nChw4c": "aBcd4b", "nChw8c": "aBcd8b", "nChw16c": "aBcd16b",
	"nCdhw4c": "aBcde4b", "nCdhw8c": "aBcde8b", "nCdhw16c": "aBcde16b",
	"NCw16n16c": "ABc16a16b", "NChw16n16c": "ABcd16a16b", "NCdhw16n16c": "ABcde16a16b",
	"NChw32n32c": "ABcd32a32b", "NCdhw32n32c": "ABcde32a32b",
}

// maxDims is the most dims a tag can name (letters a..l, as oneDNN).
const maxDims = 12

// maxBlock bounds an inner block's size; oneDNN's largest is 64.
const maxBlock = 1 << 12

// Block is one inner block of a tag: Size consecutive positions of Dim.
type Block struct {
	Dim  int
	Size int64
}

// Layout is a format tag resolved for a rank: the order of the dims'
// outer parts from the outermost to the innermost (Order), then the inner
// blocks (Blocks, outermost first; none for a plain tag). Any is set for
// the tag "any", where the library chooses.
type Layout struct {
	Tag    string // as given
	Any    bool
	Order  []int
	Blocks []Block
}

// Parse resolves tag for a tensor of the given rank. Malformed tags and
// tags that do not fit the rank are graph.InvalidArguments errors; a tag
// that blocks one dim twice (oneDNN's double blocking, e.g. "ABc4a16b4a")
// is graph.Unimplemented.
func Parse(tag string, rank int) (Layout, error) {
	l := Layout{Tag: tag}
	if tag == "any" {
		l.Any = true
		return l, nil
	}
	if tag == "" || tag == "undef" {
		return l, status.Errorf(status.InvalidArguments, "tag %q: empty or undef tag", tag)
	}
	if rank < 0 || rank > maxDims {
		return l, status.Errorf(status.InvalidArguments, "tag %q: rank %d is outside 0..%d", tag, rank, maxDims)
	}
	t := tag
	if a, ok := aliases[t]; ok {
		t = a
	}
	outer, inner := t, ""
	if i := strings.IndexAny(t, "0123456789"); i >= 0 {
		outer, inner = t[:i], t[i:]
	}
	seen := map[int]bool{}
	upper := map[int]bool{}
	var letters []int
	xPos := -1
	for _, c := range outer {
		switch {
		case c == 'x':
			if xPos >= 0 {
				return l, status.Errorf(status.InvalidArguments, "tag %q: 'x' appears twice", tag)
			}
			xPos = len(letters)
		case c >= 'a' && c <= 'l', c >= 'A' && c <= 'L':
			d := dimOf(c)
			if seen[d] {
				return l, status.Errorf(status.InvalidArguments, "tag %q: dim %c appears twice", tag, c)
			}
			seen[d] = true
			upper[d] = c <= 'L'
			letters = append(letters, d)
		default:
			return l, status.Errorf(status.InvalidArguments, "tag %q: unexpected character %q", tag, c)
		}
	}
	blocks, err := parseBlocks(tag, inner, upper)
	if err != nil {
		return l, err
	}
	for d, up := range upper {
		if up && !hasBlock(blocks, d) {
			return l, status.Errorf(status.InvalidArguments, "tag %q: dim %c is blocked but has no inner block", tag, rune('A'+d))
		}
	}
	for _, b := range blocks {
		if b.Dim >= rank {
			return l, status.Errorf(status.InvalidArguments, "tag %q blocks dim %c, but the tensor has rank %d", tag, rune('a'+b.Dim), rank)
		}
	}
	if xPos >= 0 {
		// Letters beyond the rank drop out; 'x' takes the dims not named.
		var before, after, rest []int
		for i, d := range letters {
			switch {
			case d >= rank:
			case i < xPos:
				before = append(before, d)
			default:
				after = append(after, d)
			}
		}
		for d := 0; d < rank; d++ {
			if !seen[d] {
				rest = append(rest, d)
			}
		}
		l.Order = append(append(append(l.Order, before...), rest...), after...)
	} else {
		if len(letters) != rank {
			return l, status.Errorf(status.InvalidArguments, "tag %q describes %d dims but the tensor has rank %d", tag, len(letters), rank)
		}
		for d := 0; d < rank; d++ {
			if !seen[d] {
				return l, status.Errorf(status.InvalidArguments, "tag %q: dim %c is missing", tag, rune('a'+d))
			}
		}
		l.Order = letters
	}
	l.Blocks = blocks
	return l, nil
}

func hasBlock(blocks []Block, d int) bool {
	for _, b := range blocks {
		if b.Dim == d {
			return true
		}
	}
	return false
}

// dimOf returns the dim index of a tag letter of either case.
func dimOf(c rune) int {
	if c >= 'A' && c <= 'L' {
		return int(c - 'A')
	}
	return int(c - 'a')
}

// parseBlocks reads inner blocks such as "32a16b": each a positive size
// followed by the lowercase letter of a dim the outer part names in
// uppercase.
func parseBlocks(tag, inner string, upper map[int]bool) ([]Block, error) {
	var blocks []Block
	for inner != "" {
		i := 0
		for i < len(inner) && inner[i] >= '0' && inner[i] <= '9' {
			i++
		}
		if i == 0 || i == len(inner) || inner[0] == '0' || i > 5 {
			return nil, status.Errorf(status.InvalidArguments, "tag %q: malformed inner block %q (want SIZE then a dim letter)", tag, inner)
		}
		size := int64(0)
		for _, c := range inner[:i] {
			size = size*10 + int64(c-'0')
		}
		if size > maxBlock {
			return nil, status.Errorf(status.InvalidArguments, "tag %q: inner block of %d is more than %d", tag, size, maxBlock)
		}
		c := rune(inner[i])
		if c < 'a' || c > 'l' || !upper[int(c-'a')] {
			return nil, status.Errorf(status.InvalidArguments, "tag %q: inner block names dim %q, which the tag does not block", tag, c)
		}
		d := int(c - 'a')
		if hasBlock(blocks, d) {
			return nil, status.Errorf(status.Unimplemented, "tag %q blocks dim %c twice; gdnn takes one block per dim", tag, c)
		}
		blocks = append(blocks, Block{Dim: d, Size: size})
		inner = inner[i+1:]
	}
	return blocks, nil
}

// Blocked reports whether the layout has inner blocks.
func (l Layout) Blocked() bool { return len(l.Blocks) > 0 }

// BlockOf returns the block size of dim d (1 where it is not blocked).
func (l Layout) BlockOf(d int) int64 {
	for _, b := range l.Blocks {
		if b.Dim == d {
			return b.Size
		}
	}
	return 1
}

// Strides returns the strides (elements) of a dense plain tensor with the
// given dims laid out in Order. Only meaningful for a plain layout; use
// Desc for a blocked one.
func (l Layout) Strides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(l.Order) - 1; i >= 0; i-- {
		d := l.Order[i]
		s[d] = acc
		if dims[d] > 0 {
			acc *= dims[d]
		}
	}
	return s
}

// Desc returns where the elements of a tensor with the given dims live in
// this layout. Dims must match the layout's rank and be non-negative; a
// layout whose padded size overflows is an InvalidArguments error.
func (l Layout) Desc(dims []int64) (Desc, error) {
	if l.Any {
		return Desc{}, status.Errorf(status.InvalidArguments, "layout any has no memory description")
	}
	if len(dims) != len(l.Order) {
		return Desc{}, status.Errorf(status.InvalidArguments, "tag %q is for rank %d, the tensor has rank %d", l.Tag, len(l.Order), len(dims))
	}
	r := len(dims)
	d := Desc{Dims: append([]int64(nil), dims...), Block: make([]int64, r), Outer: make([]int64, r), Inner: make([]int64, r)}
	for i, n := range dims {
		if n < 0 {
			return Desc{}, status.Errorf(status.InvalidArguments, "dim %d is %d", i, n)
		}
		d.Block[i] = l.BlockOf(i)
	}
	acc := int64(1)
	for i := len(l.Blocks) - 1; i >= 0; i-- {
		b := l.Blocks[i]
		d.Inner[b.Dim] = acc
		acc *= b.Size
	}
	for i := len(l.Order) - 1; i >= 0; i-- {
		k := l.Order[i]
		d.Outer[k] = acc
		n := ceilDiv(dims[k], d.Block[k])
		if n > 0 && acc > maxElems/n {
			return Desc{}, status.Errorf(status.InvalidArguments, "tag %q over dims %v addresses more than %d elements", l.Tag, dims, maxElems)
		}
		if n > 0 {
			acc *= n
		}
	}
	return d, nil
}

// maxElems bounds the elements one tensor may address.
const maxElems = int64(1) << 56

// ceilDiv is a/b rounded up, for a >= 0 and b > 0 (without a+b-1, which
// overflows for a near MaxInt64).
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// Desc describes a tensor's memory: logical element idx lives at
//
//	sum over dims i of (idx[i]/Block[i])*Outer[i] + (idx[i]%Block[i])*Inner[i]
//
// elements from the start. A plain strided tensor has Block 1 and its
// strides in Outer. Padding positions (a blocked dim's D..ceil(D/b)*b-1)
// exist in memory but hold no logical element.
type Desc struct {
	Dims  []int64 // logical dims
	Block []int64 // block size per dim (1: not blocked)
	Outer []int64 // stride of idx/Block, elements
	Inner []int64 // stride of idx%Block, elements (0 where not blocked)
}

// Strided returns the Desc of a plain tensor with the given strides.
func Strided(dims, strides []int64) Desc {
	r := len(dims)
	d := Desc{Dims: append([]int64(nil), dims...), Block: make([]int64, r), Outer: append([]int64(nil), strides...), Inner: make([]int64, r)}
	for i := range d.Block {
		d.Block[i] = 1
	}
	return d
}

// Offset returns the element offset of logical index idx.
func (d Desc) Offset(idx []int64) int64 {
	off := int64(0)
	for i, x := range idx {
		off += x/d.Block[i]*d.Outer[i] + x%d.Block[i]*d.Inner[i]
	}
	return off
}

// Padded reports whether some blocked dim is not a whole number of
// blocks, so that memory holds padding positions.
func (d Desc) Padded() bool {
	for i, n := range d.Dims {
		if n%d.Block[i] != 0 {
			return true
		}
	}
	return false
}

// Plain reports whether no dim is blocked.
func (d Desc) Plain() bool {
	for _, b := range d.Block {
		if b != 1 {
			return false
		}
	}
	return true
}

// Span returns how many elements a buffer must hold: one past the
// largest offset of any position, padding included (0 when a dim is 0).
func (d Desc) Span() int64 {
	span := int64(1)
	for i, n := range d.Dims {
		if n == 0 {
			return 0
		}
		b := d.Block[i]
		span += (ceilDiv(n, b) - 1) * d.Outer[i]
		if b > 1 {
			span += (b - 1) * d.Inner[i]
		}
	}
	return span
}

// Aliases returns a copy of the named tags Parse knows ("nchw",
// "nChw16c", ...) with the letter form each stands for.
func Aliases() map[string]string {
	m := make(map[string]string, len(aliases))
	for k, v := range aliases {
		m[k] = v
	}
	return m
}
