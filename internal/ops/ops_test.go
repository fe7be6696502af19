package ops

import (
	"math"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	seen := map[string]Kind{}
	for _, k := range Kinds() {
		s := k.String()
		if prev, dup := seen[s]; dup {
			t.Errorf("%d and %d share the name %q", prev, k, s)
		}
		seen[s] = k
		if got, ok := Parse(s); !ok || got != k {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, ok, k)
		}
		if k.IsBinary() != (k >= Add) {
			t.Errorf("%v.IsBinary() = %v", k, k.IsBinary())
		}
		if k.Op().Bench == "" || k.Op().GraphOp == "" {
			t.Errorf("%v has no benchdnn or graph name: %+v", k, k.Op())
		}
	}
	if len(seen) != int(Subtract) {
		t.Errorf("%d kinds, want %d", len(seen), int(Subtract))
	}
	if GELUErf.String() != "GELU" || Clamp.String() != "Clamp" || Multiply.String() != "Multiply" {
		t.Errorf("names: %v %v %v", GELUErf, Clamp, Multiply)
	}
	if k, ok := Parse("GELUErf"); !ok || k != GELUErf {
		t.Errorf("Parse(GELUErf) = %v, %v", k, ok)
	}
	for _, bad := range []string{"", "relu", "Gelu", "Linear"} {
		if k, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) = %v, want not found", bad, k)
		}
	}
	if s := Kind(0).String(); s != "Kind(0)" {
		t.Errorf("Kind(0) = %q", s)
	}
	if Kind(0).Valid() || (Subtract + 1).Valid() || (Subtract + 1).IsBinary() || Kind(-1).UsesAlpha() {
		t.Error("invalid kinds report valid")
	}
}

// Every graph op of the table maps back to its kind, GELU by its mode.
func TestOfGraphOp(t *testing.T) {
	for _, k := range Kinds() {
		op := k.Op()
		if got, ok := OfGraphOp(op.GraphOp, op.Mode); !ok || got != k {
			t.Errorf("OfGraphOp(%q, %q) = %v, %v; want %v", op.GraphOp, op.Mode, got, ok, k)
		}
	}
	if _, ok := OfGraphOp("GELU", "gelu_fast"); ok {
		t.Error("GELU with an unknown mode has a kind")
	}
	if _, ok := OfGraphOp("MatMul", ""); ok {
		t.Error("MatMul has a kind")
	}
	if m := ModesText("GELU"); m != `"gelu_erf" or "gelu_tanh"` {
		t.Errorf("ModesText(GELU) = %s", m)
	}
	if m := Modes("ReLU"); m != nil {
		t.Errorf("Modes(ReLU) = %v", m)
	}
}

func TestParamsProblem(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		k           Kind
		alpha, beta float32
		positional  bool
		want        string // "" : usable
	}{
		{Clamp, -1, 1, false, ""},
		{Clamp, -inf, inf, false, ""},
		{Clamp, 2, 1, false, "min 2 is above max 1; Clamp needs min <= max"},
		{Clamp, 2, 1, true, "min (alpha) 2 is above max (beta) 1; Clamp needs min <= max"},
		{Clamp, nan, 1, false, `attribute "min" is NaN; Clamp needs a number`},
		{Clamp, 0, nan, true, "beta is NaN"},
		{Elu, nan, 0, false, `attribute "alpha" is NaN; Elu needs a number`},
		{Elu, 0, nan, false, ""}, // Elu reads no beta
		{ReLU, nan, nan, false, ""},
		{SoftPlus, 0, 0, false, "beta is 0; SoftPlus computes log(1+exp(beta*x))/beta and needs a finite, nonzero beta"},
		{SoftPlus, 0, -inf, true, "beta is -Inf; SoftPlus"},
		{SoftPlus, nan, 2, false, ""},
		{Pow, 0, nan, false, `attribute "beta" is NaN; Pow needs a number`},
		{Pow, 0, 7, false, ""}, // a meaning, though gdnn does not compute it (IsPowBeta)
		{HardSigmoid, 0.2, nan, true, "beta is NaN"},
	} {
		got := c.k.ParamsProblem(c.alpha, c.beta, c.positional)
		if (got == "") != (c.want == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%v.ParamsProblem(%v, %v, %v) = %q, want %q", c.k, c.alpha, c.beta, c.positional, got, c.want)
		}
	}
	if IsPowBeta(7) || !IsPowBeta(-0.5) {
		t.Error("IsPowBeta")
	}
}
