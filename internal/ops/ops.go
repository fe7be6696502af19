// Package ops is the one table of the element-wise and binary ops gdnn
// fuses with a reduction: their kinds, their names in oneDNN Graph and in
// benchdnn, the attributes that carry their parameters, and the rules
// that give those parameters a meaning, with the words of the errors that
// refuse them. The graph's schemas, the plans, the reduce package's
// post-ops, gdnnbench and the emitters' coverage all read it, so a new op
// is one row here plus its arithmetic and its lowering.
//
// It is a leaf: it imports nothing of gdnn.
package ops

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Kind is an op that runs on each result of a reduction.
type Kind int

// The kinds: oneDNN's reduction fusion list. GELU's two modes are two
// kinds, for they compute different functions.
const (
	Abs Kind = iota + 1
	Clamp
	Elu
	Exp
	GELUErf
	GELUTanh
	HardSigmoid
	HardSwish
	LeakyReLU
	Log
	Mish
	Pow
	Sigmoid
	SoftPlus
	ReLU
	Round
	Sqrt
	Square
	Tanh

	Add
	Multiply
	Maximum
	Minimum
	Divide
	Subtract

	numKinds
)

// Op is one row of the table.
type Op struct {
	// Name is gdnn's name of the kind: oneDNN Graph's op kind, except
	// GELU in tanh mode, "GELUTanh", so that names (and plan keys) tell
	// the modes apart.
	Name string
	// GraphOp is the oneDNN Graph op kind, and Mode the value of its
	// "mode" attribute that selects this kind ("" where it has none).
	GraphOp, Mode string
	// Binary ops take a second operand: result OP operand.
	Binary bool
	// Alpha and Beta name the graph attributes whose values the kind
	// reads as its parameters alpha and beta ("" where it reads none).
	Alpha, Beta string
	// BetaDefault is Beta's value where the graph op leaves it out (nil:
	// the attribute is required).
	BetaDefault *float32
	// Bench is benchdnn's name of the op (an eltwise or binary alg).
	Bench string
}

var one = float32(1)

var table = [numKinds]Op{
	Abs:         {Name: "Abs", Bench: "abs"},
	Clamp:       {Name: "Clamp", Alpha: "min", Beta: "max", Bench: "clip"},
	Elu:         {Name: "Elu", Alpha: "alpha", Bench: "elu"},
	Exp:         {Name: "Exp", Bench: "exp"},
	GELUErf:     {Name: "GELU", GraphOp: "GELU", Mode: "gelu_erf", Bench: "gelu_erf"},
	GELUTanh:    {Name: "GELUTanh", GraphOp: "GELU", Mode: "gelu_tanh", Bench: "gelu_tanh"},
	HardSigmoid: {Name: "HardSigmoid", Alpha: "alpha", Beta: "beta", Bench: "hardsigmoid"},
	HardSwish:   {Name: "HardSwish", Bench: "hardswish"},
	LeakyReLU:   {Name: "LeakyReLU", Alpha: "alpha", Bench: "relu"},
	Log:         {Name: "Log", Bench: "log"},
	Mish:        {Name: "Mish", Bench: "mish"},
	Pow:         {Name: "Pow", Beta: "beta", Bench: "pow"},
	Sigmoid:     {Name: "Sigmoid", Bench: "logistic"},
	SoftPlus:    {Name: "SoftPlus", Beta: "beta", BetaDefault: &one, Bench: "soft_relu"},
	ReLU:        {Name: "ReLU", Bench: "relu"},
	Round:       {Name: "Round", Bench: "round"},
	Sqrt:        {Name: "Sqrt", Bench: "sqrt"},
	Square:      {Name: "Square", Bench: "square"},
	Tanh:        {Name: "Tanh", Bench: "tanh"},

	Add:      {Name: "Add", Binary: true, Bench: "add"},
	Multiply: {Name: "Multiply", Binary: true, Bench: "mul"},
	Maximum:  {Name: "Maximum", Binary: true, Bench: "max"},
	Minimum:  {Name: "Minimum", Binary: true, Bench: "min"},
	Divide:   {Name: "Divide", Binary: true, Bench: "div"},
	Subtract: {Name: "Subtract", Binary: true, Bench: "sub"},
}

func init() {
	for k := Abs; k < numKinds; k++ {
		if table[k].GraphOp == "" {
			table[k].GraphOp = table[k].Name
		}
	}
}

// Kinds returns every kind, in order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := Abs; k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// Valid reports whether k is a kind of the table.
func (k Kind) Valid() bool { return k >= Abs && k < numKinds }

// Op returns k's row of the table (the zero Op for an invalid k).
func (k Kind) Op() Op {
	if !k.Valid() {
		return Op{}
	}
	return table[k]
}

// String returns k's Name ("Abs", "GELU", "GELUTanh", ...).
func (k Kind) String() string {
	if !k.Valid() {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return table[k].Name
}

// IsBinary reports whether k takes a second operand.
func (k Kind) IsBinary() bool { return k.Valid() && table[k].Binary }

// UsesAlpha and UsesBeta report whether k reads the parameter; the other
// kinds ignore it.
func (k Kind) UsesAlpha() bool { return k.Valid() && table[k].Alpha != "" }

// UsesBeta: see UsesAlpha.
func (k Kind) UsesBeta() bool { return k.Valid() && table[k].Beta != "" }

// Parse returns the kind whose Name is name; "GELUErf" names GELUErf too.
// Names are case-sensitive, as in oneDNN Graph.
func Parse(name string) (Kind, bool) {
	if name == "GELUErf" {
		return GELUErf, true
	}
	for k := Abs; k < numKinds; k++ {
		if table[k].Name == name {
			return k, true
		}
	}
	return 0, false
}

// OfGraphOp returns the kind of the oneDNN Graph op kind graphOp whose
// "mode" attribute is mode (ignored for ops without modes). ok is false
// for an op that is not in the table or a mode it does not list.
func OfGraphOp(graphOp, mode string) (k Kind, ok bool) {
	for k := Abs; k < numKinds; k++ {
		if op := table[k]; op.GraphOp == graphOp && (op.Mode == "" || op.Mode == mode) {
			return k, true
		}
	}
	return 0, false
}

// Modes returns the "mode" values the graph op kind graphOp takes, in
// table order (nil for an op without modes).
func Modes(graphOp string) []string {
	var m []string
	for k := Abs; k < numKinds; k++ {
		if op := table[k]; op.GraphOp == graphOp && op.Mode != "" {
			m = append(m, op.Mode)
		}
	}
	return m
}

// ModesText is Modes(graphOp) for an error message: "gelu_erf" or
// "gelu_tanh".
func ModesText(graphOp string) string {
	m := Modes(graphOp)
	q := make([]string, len(m))
	for i, s := range m {
		q[i] = fmt.Sprintf("%q", s)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return fmt.Sprintf("%s or %s", strings.Join(q[:len(q)-1], ", "), q[len(q)-1])
}

// ParamsProblem says what leaves kind k with parameters alpha and beta
// without a meaning: a NaN parameter the kind reads; Clamp with min
// above max (oneDNN's clip needs min <= max); SoftPlus with beta 0 or
// infinite, for log(1+exp(beta*x))/beta then divides by zero at every x
// or gives Inf/Inf on half the line. Infinite Clamp bounds (an open side)
// and the infinite parameters of the other kinds, which oneDNN takes,
// have a meaning. It returns "" for usable parameters. The words name
// the graph's attributes; with positional set, the parameters alpha and
// beta as the reduce package's Post takes them.
func (k Kind) ParamsProblem(alpha, beta float32, positional bool) string {
	op := k.Op()
	nan := func(attr, param string) string {
		if positional {
			return param + " is NaN"
		}
		return fmt.Sprintf("attribute %q is NaN; %s needs a number", attr, op.GraphOp)
	}
	switch {
	case op.Alpha != "" && alpha != alpha:
		return nan(op.Alpha, "alpha")
	case op.Beta != "" && beta != beta:
		return nan(op.Beta, "beta")
	case k == Clamp && alpha > beta:
		if positional {
			return fmt.Sprintf("min (alpha) %v is above max (beta) %v; Clamp needs min <= max", alpha, beta)
		}
		return fmt.Sprintf("min %v is above max %v; Clamp needs min <= max", alpha, beta)
	case k == SoftPlus && (beta == 0 || math.IsInf(float64(beta), 0)):
		return fmt.Sprintf("beta is %v; SoftPlus computes log(1+exp(beta*x))/beta and needs a finite, nonzero beta", beta)
	}
	return ""
}

// PowBetas are the exponents of the Pow ops gdnn computes: the ones a few
// exact steps compute (x*x, 1/x, a square root, ...). Any other beta
// would need a vector pow of its own.
var PowBetas = []float32{0, 1, 2, 3, -1, -2, 0.5, -0.5}

// PowBetasText says which Pow ops gdnn computes.
const PowBetasText = "gdnn computes x^beta for beta 0, 1, 2, 3, -1, -2, 0.5 and -0.5"

// IsPowBeta reports whether beta is one of PowBetas.
func IsPowBeta(beta float32) bool { return slices.Contains(PowBetas, beta) }
