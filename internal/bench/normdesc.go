package bench

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// ParsePrbDims parses a softmax or lnorm descriptor, benchdnn's
// "AxBxC[_nNAME]" (parse_prb_dims): everything after the first 'n' is the
// name, a '_' right before it is dropped, and the rest are dims joined by
// 'x'.
func ParsePrbDims(s string) (dims []int64, name string, err error) {
	dimsPart := s
	if i := strings.IndexByte(s, 'n'); i >= 0 {
		dimsPart, name = strings.TrimSuffix(s[:i], "_"), s[i+1:]
	}
	if dimsPart == "" || dimsPart[0] < '0' || dimsPart[0] > '9' {
		return nil, "", status.Errorf(status.InvalidArguments,
			"problem %q: want dims such as 2x16x3x4 (then _nNAME), starting with an integer", s)
	}
	dims, err = parseDims(s, "the tensor", dimsPart)
	return dims, name, err
}

// gnormDesc is benchdnn's group normalization descriptor: groups,
// minibatch, channels and up to three spatial dims, epsilon and a name.
type gnormDesc struct {
	G, MB, IC, ID, IH, IW int64
	Eps                   float32
	Name                  string
	NDims                 int // 2 to 5: the data's rank
}

// gnormDefEps is benchdnn's default group normalization epsilon.
const gnormDefEps = float32(1.0 / 16)

// ParseGnormDesc parses a gnorm descriptor as benchdnn's str2desc does:
// "g5mb2ic10id9ih1iw10_eps0.1_nNAME" in any order of the fields, '_'
// between them ignored, mb 2 and eps 1/16 by default, g and ic required;
// an id alone makes a cube, an ih alone a square, and missing dims count
// from the end (ih and iw: 2-D spatial; iw alone: 1-D).
func ParseGnormDesc(s string) (gnormDesc, error) {
	d := gnormDesc{MB: 2, Eps: gnormDefEps}
	fail := func(format string, args ...any) (gnormDesc, error) {
		return gnormDesc{}, status.Errorf(status.InvalidArguments, "problem %q: "+format, append([]any{s}, args...)...)
	}
	rest := s
	for rest != "" {
		ok := false
		// Each field in benchdnn's order of checks, at most once a round.
		for _, f := range []struct {
			key string
			dst *int64
		}{{"g", &d.G}, {"mb", &d.MB}, {"ic", &d.IC}, {"id", &d.ID}, {"ih", &d.IH}, {"iw", &d.IW}} {
			if !strings.HasPrefix(rest, f.key) {
				continue
			}
			ok = true
			rest = rest[len(f.key):]
			n := leadingInt(rest)
			if n == 0 {
				return fail("no value for %s (want e.g. g2mb2ic8ih3iw4)", f.key)
			}
			v, err := strconv.ParseInt(rest[:n], 10, 64)
			if err != nil || v > 1<<40 {
				return fail("%s %q is not an integer in range", f.key, rest[:n])
			}
			if v < 0 {
				return fail("%s must be positive", f.key)
			}
			*f.dst = v
			rest = rest[n:]
		}
		if strings.HasPrefix(rest, "eps") {
			ok = true
			rest = rest[3:]
			n := leadingFloat(rest)
			if n == 0 {
				return fail("no value for eps")
			}
			v, err := strconv.ParseFloat(rest[:n], 32)
			if errors.Is(err, strconv.ErrRange) {
				return fail("eps %q is out of f32's range", rest[:n])
			}
			if err != nil {
				return fail("eps %q is not a number", rest[:n])
			}
			d.Eps = float32(v)
			rest = rest[n:]
		}
		if strings.HasPrefix(rest, "n") {
			d.Name = rest[1:]
			break
		}
		if strings.HasPrefix(rest, "_") {
			rest = rest[1:]
			ok = true
		}
		if !ok {
			return fail("unrecognized field at %q (want gG mbN icC idD ihH iwW epsF _nNAME)", rest)
		}
	}
	if d.IC <= 0 {
		return fail("ic was not given or is 0")
	}
	if d.G <= 0 {
		return fail("g was not given or is 0")
	}
	// benchdnn's sanitize_desc, with default 1 for the spatial dims not given.
	d.NDims = 5
	noD, noH, noW := d.ID == 0, d.IH == 0, d.IW == 0
	if noD {
		d.NDims--
	}
	if noD && noH {
		d.NDims--
	}
	if noD && noH && noW {
		d.NDims--
	}
	switch {
	case d.NDims == 5 && noH && noW:
		d.IH, d.IW = d.ID, d.ID
	case d.NDims == 5 && (noH || noW):
		return fail("give both ih and iw, or neither")
	case d.NDims == 4 && noW:
		d.IW = d.IH
	}
	if d.NDims < 5 {
		d.ID = 1
	}
	if d.NDims < 4 {
		d.IH = 1
	}
	if d.NDims < 3 {
		d.IW = 1
	}
	return d, nil
}

// leadingInt returns the length of the integer (optionally signed) at
// the start of s, as strtoll reads it.
func leadingInt(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0
	}
	return j
}

// leadingFloat returns the length of the decimal number at the start of
// s (sign, digits, point, exponent), as strtof reads it.
func leadingFloat(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		if s[i] != '.' {
			digits++
		}
		i++
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if n := leadingInt(s[i+1:]); n > 0 {
			i += 1 + n
		}
	}
	return i
}

// dataDims returns the src dims: mb, ic, then the spatial dims of the
// descriptor's rank.
func (d gnormDesc) dataDims() []int64 {
	all := []int64{d.MB, d.IC, d.ID, d.IH, d.IW}
	if d.NDims < 2 || d.NDims > 5 {
		return all[:2]
	}
	return append(all[:2:2], all[5-(d.NDims-2):]...)
}

// String prints the descriptor as benchdnn's does: mb unless 2, g, ic,
// the spatial dims that are not implied (a cube's id alone, a square's
// ih alone), eps unless the default, then the name.
func (d gnormDesc) String() string { return d.format(false) }

// format is String, or with canonical every field as benchdnn's
// --canonical=true prints it: mb, every spatial dim of the rank and eps
// whatever their values.
func (d gnormDesc) format(canonical bool) string {
	var b strings.Builder
	if canonical || d.MB != 2 {
		b.WriteString("mb" + strconv.FormatInt(d.MB, 10))
	}
	b.WriteString("g" + strconv.FormatInt(d.G, 10) + "ic" + strconv.FormatInt(d.IC, 10))
	cube := d.ID == d.IH && d.IH == d.IW && !canonical
	square := d.IH == d.IW && !canonical
	if d.NDims == 5 {
		b.WriteString("id" + strconv.FormatInt(d.ID, 10))
	}
	if d.NDims == 4 || (d.NDims == 5 && !cube) {
		b.WriteString("ih" + strconv.FormatInt(d.IH, 10))
	}
	if d.NDims == 3 || (d.NDims == 5 && !cube) || (d.NDims == 4 && !square) {
		b.WriteString("iw" + strconv.FormatInt(d.IW, 10))
	}
	if canonical || d.Eps != gnormDefEps {
		b.WriteString("eps" + strconv.FormatFloat(float64(d.Eps), 'g', 6, 32))
	}
	if d.Name != "" {
		b.WriteString("n" + d.Name)
	}
	return b.String()
}

// checkEps refuses an epsilon a normalization cannot take.
func checkEps(eps float32) error {
	if math.IsNaN(float64(eps)) || eps < 0 || math.IsInf(float64(eps), 0) {
		return status.Errorf(status.InvalidArguments, "epsilon %v: want a finite value >= 0", eps)
	}
	return nil
}
