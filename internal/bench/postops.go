package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// postOpClass groups benchdnn's post-op kinds by their syntax.
type postOpClass int

const (
	classEltwise postOpClass = iota + 1
	classBinary
	classSum
	classDW
	classPrelu
)

// postOpNames maps every spelling benchdnn accepts to the canonical name
// and its class.
var postOpNames = map[string]struct {
	canon string
	class postOpClass
}{}

func init() {
	add := func(class postOpClass, canon string, aliases ...string) {
		postOpNames[canon] = struct {
			canon string
			class postOpClass
		}{canon, class}
		for _, a := range aliases {
			postOpNames[a] = postOpNames[canon]
		}
	}
	add(classSum, "sum")
	add(classDW, "dw")
	add(classPrelu, "prelu")
	for _, n := range []string{"abs", "clip", "clip_v2", "elu", "exp", "gelu_erf", "gelu_tanh", "hardsigmoid",
		"hardswish", "linear", "log", "logistic", "mish", "pow", "relu", "round", "sqrt", "square", "swish", "tanh"} {
		add(classEltwise, n, "eltwise_"+n)
	}
	add(classEltwise, "soft_relu", "eltwise_soft_relu", "srelu")
	for _, n := range []string{"clip_v2", "elu", "exp", "logistic", "relu", "sqrt", "tanh"} {
		add(classEltwise, n+"_dst", "eltwise_"+n+"_use_dst_for_bwd")
	}
	for _, n := range []string{"add", "div", "eq", "ge", "gt", "le", "lt", "max", "min", "mul", "ne", "sub"} {
		add(classBinary, n, "binary_"+n)
	}
}

// policyMasks maps benchdnn's broadcast policies to dim masks (bit i set:
// the operand has the dst's size in dim i; clear: size 1, broadcast).
// These are the policies benchdnn documents (knobs_attr.md) and per_ocic,
// which benchdnn's default masks give per_dim_01's.
var policyMasks = map[string]int{
	"common": 0, "per_oc": 1 << 1, "per_dim_0": 1, "per_dim_1": 1 << 1, "per_dim_01": 3, "per_ocic": 3,
	"per_dim_2": 1 << 2, "per_dim_3": 1 << 3, "per_dim_023": 1 | 1<<2 | 1<<3, "per_dim_23": 1<<2 | 1<<3,
	"per_dim_03": 1 | 1<<3, "per_tensor": 1<<graph.MaxRank - 1,
}

// PostOp is one entry of benchdnn's --attr-post-ops.
type PostOp struct {
	Kind  string // canonical benchdnn name, e.g. "relu", "add", "sum"
	class postOpClass

	// Eltwise parameters; NParams says how many were written.
	Alpha, Beta float32
	NParams     int

	// Binary operand: data type, broadcast (policy name or numeric mask)
	// and layout tag ("any" when not given).
	BinDT  dtypes.DataType
	Policy string // "" when a numeric mask or nothing was given
	Mask   int    // the mask in effect (0: common)
	HasArg bool   // a policy or mask was written
	Tag    string

	// Sum parameters: dst = Scale * (dst_before - ZeroPoint) + result,
	// dst_before read as SumDT (Undef: the dst's type).
	Scale     float32
	ZeroPoint int64
	SumDT     dtypes.DataType

	// Raw keeps the text of kinds gdnn only recognises (sum, dw, prelu).
	Raw string
}

// IsSum reports whether the post-op is benchdnn's sum (accumulate into
// dst).
func (p PostOp) IsSum() bool { return p.class == classSum }

// IsBinary reports whether the post-op takes a second tensor.
func (p PostOp) IsBinary() bool { return p.class == classBinary }

// ParsePostOps parses one --attr-post-ops value: entries joined by '+',
// each KIND[:ARG[:ARG...]] as benchdnn writes them (ELTWISE[:ALPHA[:BETA]],
// BINARY:DT[:POLICY_OR_MASK[:TAG]], SUM[:SCALE[:ZP[:DT]]], DW:KkSsPp[:DT],
// PRELU[:POLICY]). The empty string means no post-ops.
func ParsePostOps(s string) ([]PostOp, error) {
	if s == "" {
		return nil, nil
	}
	var out []PostOp
	for _, entry := range strings.Split(s, "+") {
		fields := strings.Split(entry, ":")
		info, ok := postOpNames[strings.ToLower(fields[0])]
		if !ok {
			return nil, status.Errorf(status.InvalidArguments, "post-ops %q: unknown post-op kind %q", s, fields[0])
		}
		p := PostOp{Kind: info.canon, class: info.class, Tag: "any", Raw: entry}
		args := fields[1:]
		for i, a := range args {
			if a == "" {
				return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q has an empty argument %d", s, entry, i+1)
			}
		}
		switch info.class {
		case classEltwise:
			if len(args) > 2 {
				return nil, status.Errorf(status.InvalidArguments, "post-ops %q: eltwise entry %q takes at most ALPHA:BETA", s, entry)
			}
			vals := make([]float32, len(args))
			for i, a := range args {
				v, err := parseF32(a)
				if err != nil {
					return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: %v", s, entry, err)
				}
				vals[i] = v
			}
			if len(vals) > 0 {
				p.Alpha = vals[0]
			}
			if len(vals) > 1 {
				p.Beta = vals[1]
			}
			p.NParams = len(vals)
		case classBinary:
			if len(args) == 0 || len(args) > 3 {
				return nil, status.Errorf(status.InvalidArguments, "post-ops %q: binary entry %q wants DT[:POLICY[:TAG]]", s, entry)
			}
			dt, err := dtypes.Parse(args[0])
			if err != nil || !dt.Valid() {
				return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: unknown data type %q", s, entry, args[0])
			}
			p.BinDT = dt
			if len(args) > 1 {
				p.HasArg = true
				if m, err := strconv.Atoi(args[1]); err == nil && m >= 0 && strconv.Itoa(m) == args[1] {
					p.Mask = m
				} else if m, ok := policyMasks[strings.ToLower(args[1])]; ok {
					p.Policy, p.Mask = strings.ToLower(args[1]), m
				} else {
					return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: unknown policy %q", s, entry, args[1])
				}
			}
			if len(args) > 2 {
				if _, err := ResolveTag(args[2], tagProbeRank(args[2])); err != nil && !isStatus(err, status.Unimplemented) {
					return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: %s", s, entry, reasonOf(err))
				}
				p.Tag = args[2]
			}
		case classSum:
			if len(args) > 3 {
				return nil, status.Errorf(status.InvalidArguments, "post-ops %q: sum entry %q wants [SCALE[:ZERO_POINT[:DT]]]", s, entry)
			}
			p.Scale = 1
			if len(args) > 0 {
				v, err := parseF32(args[0])
				if err != nil {
					return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: scale %v", s, entry, err)
				}
				p.Scale = v
			}
			if len(args) > 1 {
				v, err := strconv.ParseInt(args[1], 10, 32)
				if err != nil {
					return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: zero point %q is not a 32-bit integer", s, entry, args[1])
				}
				p.ZeroPoint = v
			}
			if len(args) > 2 {
				dt, err := dtypes.Parse(args[2])
				if err != nil || !dt.Valid() {
					return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: unknown data type %q", s, entry, args[2])
				}
				p.SumDT = dt
			}
		case classDW:
			if len(args) == 0 || len(args) > 2 {
				return nil, status.Errorf(status.InvalidArguments, "post-ops %q: depthwise entry %q wants kKsSpP[:DT]", s, entry)
			}
		case classPrelu:
			if len(args) > 1 {
				return nil, status.Errorf(status.InvalidArguments, "post-ops %q: prelu entry %q wants [POLICY]", s, entry)
			}
			if len(args) == 1 {
				if _, ok := policyMasks[strings.ToLower(args[0])]; !ok {
					return nil, status.Errorf(status.InvalidArguments, "post-ops %q: entry %q: unknown policy %q", s, entry, args[0])
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// tagProbeRank is the rank at which a tag is checked for syntax before the
// problem's rank is known: the number of letters its outer part names
// (inner blocks such as the "16b" of "aBcd16b" name dims again), or 4 for
// tags with 'x'.
func tagProbeRank(tag string) int {
	if a, ok := tagAliases[tag]; ok {
		tag = a
	}
	if i := strings.IndexAny(tag, "0123456789"); i >= 0 {
		tag = tag[:i]
	}
	if strings.ContainsRune(tag, 'x') {
		return 4
	}
	n := 0
	for _, c := range tag {
		if (c >= 'a' && c <= 'l') || (c >= 'A' && c <= 'L') {
			n++
		}
	}
	return n
}

// FormatPostOps writes post-ops back in benchdnn syntax (canonical kind
// names, parameters as benchdnn prints them).
func FormatPostOps(ops []PostOp) string {
	parts := make([]string, len(ops))
	for i, p := range ops {
		switch p.class {
		case classEltwise:
			s := p.Kind
			if p.Beta != 0 {
				s += ":" + fmtFloat(p.Alpha) + ":" + fmtFloat(p.Beta)
			} else if p.Alpha != 0 {
				s += ":" + fmtFloat(p.Alpha)
			}
			parts[i] = s
		case classBinary:
			s := p.Kind + ":" + p.BinDT.String()
			if p.HasArg || p.Tag != "any" {
				if p.Policy != "" {
					s += ":" + p.Policy
				} else {
					s += ":" + strconv.Itoa(p.Mask)
				}
			}
			if p.Tag != "any" {
				s += ":" + p.Tag
			}
			parts[i] = s
		default:
			parts[i] = p.Raw
		}
	}
	return strings.Join(parts, "+")
}

// fmtFloat prints a float32 in the shortest form that reads back exactly
// and has no '+' in it, which separates post-ops: 1e20 (not 1e+20),
// inf, -inf and nan, as the parsers read them.
func fmtFloat(v float32) string {
	f := float64(v)
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strings.Replace(strconv.FormatFloat(f, 'g', -1, 32), "e+", "e", 1)
}

// parseF32 reads a number as benchdnn's options take it (inf and nan
// included). A number beyond the f32 range is an error that says so.
func parseF32(s string) (float32, error) {
	f, err := strconv.ParseFloat(s, 32)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is out of the f32 range", s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return float32(f), nil
}

// graphPostOp is a post-op translated to a gdnn graph op.
type graphPostOp struct {
	kind  graph.OpKind
	attrs map[string]any
	// For the float64 reference.
	elt         string // eltwise function name (refEltwise)
	alpha, beta float64
	bin         string // binary function name (refBinary)
}

// toGraph translates a post-op to the graph op gdnn fuses after a
// reduction. Post-ops outside gdnn's fusion list give an error with
// status graph.Unimplemented that says why.
func (p PostOp) toGraph() (graphPostOp, error) {
	g := graphPostOp{attrs: map[string]any{}, alpha: float64(p.Alpha), beta: float64(p.Beta)}
	unimpl := func(why string) (graphPostOp, error) {
		return g, status.Errorf(status.Unimplemented, "post-op %q: %s", p.Raw, why)
	}
	switch p.class {
	case classSum:
		// An Add whose operand is the dst itself (see sumOperand).
		g.kind, g.bin = graph.Add, "add"
		g.attrs["auto_broadcast"] = "numpy"
		return g, nil
	case classDW:
		return unimpl("depthwise convolution post-ops are not fused after a reduction")
	case classPrelu:
		return unimpl("PReLU is not in gdnn's reduction fusion list")
	case classBinary:
		if !plan.IsOperandType(p.BinDT) {
			return unimpl("binary operand data type " + p.BinDT.String() + " is not f32, bf16, f16, s8, u8 or s32")
		}
		kinds := map[string]graph.OpKind{"add": graph.Add, "mul": graph.Multiply, "max": graph.Maximum,
			"min": graph.Minimum, "div": graph.Divide, "sub": graph.Subtract}
		k, ok := kinds[p.Kind]
		if !ok {
			return unimpl("binary " + p.Kind + " is not in gdnn's reduction fusion list (add, mul, max, min, div, sub)")
		}
		g.kind, g.bin = k, p.Kind
		g.attrs["auto_broadcast"] = "numpy"
		return g, nil
	}
	g.elt = p.Kind
	switch p.Kind {
	case "abs":
		g.kind = graph.Abs
	case "clip", "clip_v2":
		g.kind, g.elt = graph.Clamp, "clip"
		if p.Alpha > p.Beta {
			return g, status.Errorf(status.InvalidArguments, "post-op %q: clip lower bound %g is above the upper bound %g", p.Raw, p.Alpha, p.Beta)
		}
		g.attrs["min"], g.attrs["max"] = p.Alpha, p.Beta
	case "elu":
		g.kind = graph.Elu
		g.attrs["alpha"] = p.Alpha
	case "exp":
		g.kind = graph.Exp
	case "gelu_erf", "gelu_tanh":
		g.kind = graph.GELU
		g.attrs["mode"] = p.Kind
	case "hardsigmoid":
		g.kind = graph.HardSigmoid
		g.attrs["alpha"], g.attrs["beta"] = p.Alpha, p.Beta
	case "hardswish":
		// gdnn's HardSwish has oneDNN Graph's fixed alpha=1/6, beta=1/2;
		// without parameters that is what is meant.
		if p.NParams > 0 && (math.Abs(float64(p.Alpha)-1.0/6) > 1e-6 || p.Beta != 0.5) {
			return unimpl("HardSwish has fixed alpha=1/6 and beta=1/2 in oneDNN Graph")
		}
		g.kind, g.alpha, g.beta = graph.HardSwish, 1.0/6, 0.5
	case "log":
		g.kind = graph.Log
	case "logistic":
		g.kind = graph.Sigmoid
	case "mish":
		g.kind = graph.Mish
	case "pow":
		// benchdnn's pow is alpha * x^beta; oneDNN Graph's Pow has beta
		// only.
		if p.Alpha != 1 {
			return unimpl(fmt.Sprintf("alpha %v: oneDNN Graph's Pow computes x^beta with no scale (alpha 1)", p.Alpha))
		}
		if !ops.IsPowBeta(p.Beta) {
			return unimpl(fmt.Sprintf("beta %v: %s", p.Beta, ops.PowBetasText))
		}
		g.kind = graph.Pow
		g.attrs["beta"] = p.Beta
	case "relu":
		g.kind = graph.ReLU
		if p.Alpha != 0 {
			g.kind = graph.LeakyReLU
			g.attrs["alpha"] = p.Alpha
		}
	case "round":
		g.kind = graph.Round
	case "soft_relu":
		// oneDNN's soft_relu is log(1+exp(alpha*x))/alpha, SoftPlus with
		// beta=alpha; alpha 0 (not given) means the usual softplus, beta 1.
		g.kind = graph.SoftPlus
		if p.Alpha == 0 {
			g.alpha = 1
		}
		g.attrs["beta"] = float32(g.alpha)
	case "sqrt":
		g.kind = graph.Sqrt
	case "square":
		g.kind = graph.Square
	case "tanh":
		g.kind = graph.Tanh
	default:
		return unimpl("eltwise " + p.Kind + " is not in gdnn's reduction fusion list")
	}
	return g, nil
}

// sumDT returns the data type a sum post-op reads the previous dst as,
// for a dst of type ddt, or an error: a type of another size than the
// dst's is unimplemented (the sum reads the dst's own bytes). oneDNN 2.6's
// reduction takes no sum data type but the default at all
// (dnnl_primitive_desc_create returns dnnl_unimplemented even for the
// dst's own type); gdnn takes any type of the dst's size.
func (p PostOp) sumDT(ddt dtypes.DataType) (dtypes.DataType, error) {
	dt := p.SumDT
	if dt == dtypes.Undef {
		dt = ddt
	}
	if !plan.IsOperandType(dt) {
		return dt, status.Errorf(status.Unimplemented, "post-op %q: sum data type %s: gdnn reads a sum's previous dst as f32, bf16, f16, s8, u8 or s32", p.Raw, dt)
	}
	if dt.Size() != ddt.Size() {
		return dt, status.Errorf(status.Unimplemented, "post-op %q: sum data type %s has another size than the dst's %s", p.Raw, dt, ddt)
	}
	return dt, nil
}

// operandDims returns the dims of a binary post-op's second tensor for a
// dst with the given dims: the dst's size where the mask has a bit, else 1.
func (p PostOp) operandDims(dst []int64) []int64 {
	d := make([]int64, len(dst))
	for i := range dst {
		d[i] = 1
		if p.Mask&(1<<i) != 0 {
			d[i] = dst[i]
		}
	}
	return d
}
