package plan

import "fmt"

// kindNames holds oneDNN Graph's op name for every post-op kind. The two
// GELU modes are one op ("GELU" with a mode attribute) in oneDNN; they get
// distinct names here so that names, and so plan keys, tell them apart.
var kindNames = [...]string{
	Abs:         "Abs",
	Clamp:       "Clamp",
	Elu:         "Elu",
	Exp:         "Exp",
	GELUErf:     "GELU",
	GELUTanh:    "GELUTanh",
	HardSigmoid: "HardSigmoid",
	HardSwish:   "HardSwish",
	LeakyReLU:   "LeakyReLU",
	Log:         "Log",
	Mish:        "Mish",
	Pow:         "Pow",
	Sigmoid:     "Sigmoid",
	SoftPlus:    "SoftPlus",
	ReLU:        "ReLU",
	Round:       "Round",
	Sqrt:        "Sqrt",
	Square:      "Square",
	Tanh:        "Tanh",
	Add:         "Add",
	Multiply:    "Multiply",
	Maximum:     "Maximum",
	Minimum:     "Minimum",
	Divide:      "Divide",
	Subtract:    "Subtract",
}

// Valid reports whether k is one of the named post-op kinds.
func (k Kind) Valid() bool { return k >= Abs && k <= Subtract }

// String returns oneDNN Graph's op name for k ("Abs", "Clamp", ...);
// GELUErf is "GELU" (oneDNN's default mode) and GELUTanh is "GELUTanh".
func (k Kind) String() string {
	if !k.Valid() {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// ParseKind returns the kind whose String is name. It also accepts
// "GELUErf" for GELUErf. Names are case-sensitive, as in oneDNN Graph.
func ParseKind(name string) (Kind, bool) {
	if name == "GELUErf" {
		return GELUErf, true
	}
	for k := Abs; k <= Subtract; k++ {
		if kindNames[k] == name {
			return k, true
		}
	}
	return 0, false
}

// usesAlpha and usesBeta report whether an eltwise kind reads the
// parameter; the others ignore it, so it stays out of plan keys.
func (k Kind) usesAlpha() bool {
	return k == Clamp || k == Elu || k == HardSigmoid || k == LeakyReLU
}

func (k Kind) usesBeta() bool {
	return k == Clamp || k == HardSigmoid || k == SoftPlus || k == Pow
}
