package bench

import (
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
)

// Problem is a reduction problem descriptor "SRCDIMS:DSTDIMS[_nNAME]":
// the src dims, the dst dims (each equal to the src dim, or 1 where the
// dim is reduced) and an optional name.
type Problem struct {
	Src, Dst []int64
	Name     string
}

// ParseProblem parses a benchdnn reduction descriptor such as
// "2x16x3x4:2x1x3x1" or "1x64x7x7:1x64x1x1_n\"gap\"". Following benchdnn,
// everything after the first 'n' is the name and a '_' right before that
// 'n' is dropped. Errors name the input and the offending position.
func ParseProblem(s string) (Problem, error) {
	var p Problem
	dimsPart := s
	if i := strings.IndexByte(s, 'n'); i >= 0 {
		dimsPart, p.Name = s[:i], s[i+1:]
		dimsPart = strings.TrimSuffix(dimsPart, "_")
	}
	if dimsPart == "" || dimsPart[0] < '0' || dimsPart[0] > '9' {
		return p, status.Errorf(status.InvalidArguments,
			"problem %q: dims must start with an integer (want SRCDIMS:DSTDIMS, e.g. 2x16x3x4:2x1x3x1)", s)
	}
	parts := strings.Split(dimsPart, ":")
	if len(parts) != 2 {
		return p, status.Errorf(status.InvalidArguments,
			"problem %q: has %d ':'-separated tensors, want 2 (SRCDIMS:DSTDIMS)", s, len(parts))
	}
	var err error
	if p.Src, err = parseDims(s, "src", parts[0]); err != nil {
		return p, err
	}
	if p.Dst, err = parseDims(s, "dst", parts[1]); err != nil {
		return p, err
	}
	if len(p.Src) != len(p.Dst) {
		return p, status.Errorf(status.InvalidShape,
			"problem %q: src has rank %d but dst has rank %d; they must match", s, len(p.Src), len(p.Dst))
	}
	return p, nil
}

// Check reports what keeps a well-formed descriptor from being a
// reduction gdnnbench can run: a dst dim that is neither its src dim nor
// 1 (InvalidShape; like benchdnn, whose library refuses such a problem
// with invalid_arguments, the driver reports it as INVALID_ARGUMENTS and
// goes on with the batch), or a tensor of more than maxElements elements
// (OutOfMemory: SKIPPED).
func (p Problem) Check() error {
	for i := range p.Src {
		if i < len(p.Dst) && p.Dst[i] != p.Src[i] && p.Dst[i] != 1 {
			return status.Errorf(status.InvalidShape,
				"dst dim %d is %d; it must equal src dim %d (%d) or be 1", i, p.Dst[i], i, p.Src[i])
		}
	}
	for _, t := range []struct {
		what string
		dims []int64
	}{{"src", p.Src}, {"dst", p.Dst}} {
		if n, ok := numElements(t.dims); !ok || n > maxElements {
			return status.Errorf(status.OutOfMemory, "%s has more than %d elements", t.what, int64(maxElements))
		}
	}
	return nil
}

// parseDims parses "AxBxC" (what says which tensor, for messages).
func parseDims(input, what, s string) ([]int64, error) {
	if s == "" {
		return nil, status.Errorf(status.InvalidArguments, "problem %q: %s dims are empty", input, what)
	}
	fields := strings.Split(s, "x")
	if len(fields) > graph.MaxRank {
		return nil, status.Errorf(status.InvalidShape, "problem %q: %s has rank %d, more than the maximum %d",
			input, what, len(fields), graph.MaxRank)
	}
	dims := make([]int64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 || strconv.FormatInt(v, 10) != f {
			return nil, status.Errorf(status.InvalidArguments,
				"problem %q: %s dim %d is %q, want a non-negative integer", input, what, i, f)
		}
		dims[i] = v
	}
	return dims, nil
}

// maxElements bounds a tensor's element count so that buffers stay
// allocatable and byte sizes never overflow.
const maxElements = 1 << 34

// numElements returns the product of dims and false on overflow.
func numElements(dims []int64) (int64, bool) {
	n := int64(1)
	for _, d := range dims {
		if d == 0 {
			return 0, true
		}
		if n > (1<<62)/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// Reduced reports per dim whether the problem reduces it (dst 1, src not 1).
func (p Problem) Reduced() []bool {
	r := make([]bool, len(p.Src))
	for i := range p.Src {
		r[i] = p.Dst[i] != p.Src[i]
	}
	return r
}

// Axes returns the reduced dims as a Reduce* op's axes.
func (p Problem) Axes() []int64 {
	axes := []int64{}
	for i, r := range p.Reduced() {
		if r {
			axes = append(axes, int64(i))
		}
	}
	return axes
}

// String formats the descriptor the way ParseProblem reads it.
func (p Problem) String() string {
	s := dimsString(p.Src) + ":" + dimsString(p.Dst)
	if p.Name != "" {
		s += "_n" + p.Name
	}
	return s
}

// dimsString formats dims as "AxBxC".
func dimsString(d []int64) string {
	var b strings.Builder
	for i, v := range d {
		if i > 0 {
			b.WriteByte('x')
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	return b.String()
}
