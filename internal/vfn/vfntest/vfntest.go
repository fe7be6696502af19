// Package vfntest generates random package vfn programs and checks an
// emitter's output for them against vfn.Model, for the emitters'
// randomized tests (amd64's and arm64's TestRandomPrograms): programs
// that no real post-op has, so that every lowering path is taken
// (constants in every operand slot, an operand read twice by one step,
// a select or an FMA whose result takes any of its operands' registers,
// long live ranges up to the emitters' register budgets).
package vfntest

import (
	"errors"
	"testing"

	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/gdnn/gdnn/internal/vfn"
)

// Kind is the post-op kind the tests run random programs under: one
// with a program, so that the emitters accept the plan and dispatch it
// to their program lowering.
const Kind = ops.Sigmoid

// Config bounds a random program.
type Config struct {
	Steps   int  // at most this many non-constant steps (at least one)
	MaxLive int  // at most this many non-constant values besides x may still be read at once
	Exp     bool // whether Exp steps may occur
}

// specials are constants (and inputs) that the steps treat specially.
var specials = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 2, -2, 3, 0.1, -7.25, 1.5,
	0x1p-149, -0x1p-149, 1e-40, 0x1p-126, -0x1p-126, 1e-30, 1e30, -1e30, math.MaxFloat32, -math.MaxFloat32,
	88.7, -104, 10, -20, 64, -64, 1e10, 0x1p100, -0x1p100}

// Constant returns a random f32 constant: a special value (signed
// zeros, one, tiny and huge ones), a moderate or any finite random one,
// or rarely an infinity.
func Constant(rng *rand.Rand) float32 {
	switch r := rng.IntN(100); {
	case r < 45:
		return specials[rng.IntN(len(specials))]
	case r < 75:
		return float32(rng.NormFloat64() * 4)
	case r < 97:
		for {
			f := math.Float32frombits(rng.Uint32())
			if f == f && !math.IsInf(float64(f), 0) {
				return f
			}
		}
	case r < 98:
		return float32(math.Inf(1))
	default:
		return float32(math.Inf(-1))
	}
}

// Inputs returns n (at least len(specials)+12) varied inputs: the
// specials and their neighbours, ±Inf, quiet and signalling NaNs of
// both signs, subnormals, moderate values and random bit patterns.
func Inputs(rng *rand.Rand, n int) []float32 {
	xs := []float32{float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000), math.Float32frombits(0x7f800001),
		math.Float32frombits(0xff812345), math.Float32frombits(0x7fbfffff),
		math.Float32frombits(1), math.Float32frombits(0x807fffff), math.Float32frombits(0x00400000),
		math.Float32frombits(0x7f7fffff), math.Float32frombits(0x80800000)}
	xs = append(xs, specials...)
	for len(xs) < n {
		switch r := rng.IntN(10); {
		case r < 2:
			s := specials[rng.IntN(len(specials))]
			xs = append(xs, math.Float32frombits(math.Float32bits(s)+uint32(rng.IntN(5))-2))
		case r < 6:
			xs = append(xs, float32(rng.NormFloat64()*8))
		case r < 7:
			xs = append(xs, math.Float32frombits(rng.Uint32()&0x807fffff)) // subnormal or zero
		default:
			xs = append(xs, math.Float32frombits(rng.Uint32()))
		}
	}
	return xs
}

// stepKinds are the step kinds a random program draws from, with weights.
var stepKinds = []struct {
	op vfn.Op
	w  int
}{
	{vfn.Add, 6}, {vfn.Sub, 6}, {vfn.Mul, 6}, {vfn.Div, 3}, {vfn.FMA, 8}, {vfn.Abs, 2}, {vfn.Neg, 2},
	{vfn.Min, 3}, {vfn.Max, 3}, {vfn.OrSign, 3}, {vfn.Poly, 3}, {vfn.SelLT, 7}, {vfn.SelLE, 7}, {vfn.Exp, 3},
}

// Random returns a random valid program under Kind: each step reads
// earlier values (x, a constant in any operand slot, the same value in
// several slots, a recent value or one from long before), with at most
// cfg.MaxLive non-constant values besides x open for reading at once.
// Its last step is not a constant.
func Random(rng *rand.Rand, cfg Config) *vfn.Program {
	p := &vfn.Program{Kind: Kind}
	var open, consts []vfn.Val
	newConst := func() vfn.Val {
		p.Steps = append(p.Steps, vfn.Step{Op: vfn.Const, Bits: math.Float32bits(Constant(rng))})
		consts = append(consts, p.Result())
		return p.Result()
	}
	total := 0
	for _, o := range stepKinds {
		if o.op != vfn.Exp || cfg.Exp {
			total += o.w
		}
	}
	n := 1 + rng.IntN(max(cfg.Steps, 1))
	for k := 0; k < n; k++ {
		var op vfn.Op
		w := rng.IntN(total)
		for _, o := range stepKinds {
			if o.op == vfn.Exp && !cfg.Exp {
				continue
			}
			if w < o.w {
				op = o.op
				break
			}
			w -= o.w
		}
		nargs := 2
		switch op {
		case vfn.Abs, vfn.Neg, vfn.Poly, vfn.Exp:
			nargs = 1
		case vfn.FMA:
			nargs = 3
		case vfn.SelLT, vfn.SelLE:
			nargs = 4
		}
		args := make([]vfn.Val, 0, nargs)
		for len(args) < nargs {
			switch r := rng.IntN(100); {
			case r < 12 && len(args) > 0:
				args = append(args, args[rng.IntN(len(args))]) // read twice
			case r < 22 && len(consts) > 0:
				args = append(args, consts[rng.IntN(len(consts))])
			case r < 34:
				args = append(args, newConst())
			case r < 46 || len(open) == 0:
				args = append(args, vfn.X)
			case r < 80:
				args = append(args, open[len(open)-1-min(rng.IntN(2), len(open)-1)]) // recent
			default:
				args = append(args, open[rng.IntN(len(open))])
			}
		}
		s := vfn.Step{Op: op}
		for j, v := range args {
			*[]*vfn.Val{&s.A, &s.B, &s.C, &s.D}[j] = v
		}
		if op == vfn.Poly {
			s.Coef = make([]uint32, 1+rng.IntN(6))
			for j := range s.Coef {
				c := Constant(rng)
				if rng.IntN(3) > 0 {
					c = float32(rng.NormFloat64())
				}
				s.Coef[j] = math.Float32bits(c)
			}
		}
		p.Steps = append(p.Steps, s)
		open = append(open, p.Result())
		if len(open) > cfg.MaxLive {
			j := rng.IntN(len(open) - 1) // never the newest
			open = append(open[:j], open[j+1:]...)
		}
	}
	return p
}

// Eval runs p on x as vfn.Model does and reports whether the evaluation
// stayed inside the IR's contract (the package vfn doc), where an
// emitter must give Model's bits: no Min or Max with a NaN operand or
// with two zeros, no exp of a NaN (the emitters' exp leaves NaN lanes
// to the program's end), no OrSign taking a NaN's sign bit (instruction
// sets' default NaNs differ in sign). A NaN elsewhere stays a NaN on
// every emitter: where the result is a NaN, an emitter must give a NaN
// (of any bits). A NaN x is in the contract: the result is x.
func Eval(p *vfn.Program, x float32) (y float32, ok bool) {
	if x != x {
		return vfn.Model(p, x), true
	}
	v := vfn.Values(p, x)
	for _, s := range p.Steps {
		a, b := v[s.A], v[s.B]
		switch s.Op {
		case vfn.Min, vfn.Max:
			if a != a || b != b || (a == 0 && b == 0) {
				return 0, false
			}
		case vfn.Exp:
			if a != a {
				return 0, false
			}
		case vfn.OrSign:
			if b != b {
				return 0, false
			}
		}
	}
	return v[len(v)-1], true
}

// Compare holds got, the output of an identity problem over inputs
// whose post-op was program p and whose post-op saw the values in (the
// kernel's own inputs: a NaN quietened), to Eval: a NaN x's quietened
// bits, a NaN where Eval's result is a NaN, else Eval's bits, in every
// lane whose evaluation stayed inside the contract. It returns
// descriptions of the first few lanes that differ, how many did, and how
// many lanes were inside the contract.
func Compare(p *vfn.Program, xs, in []float32, got []byte) (bad []string, nbad, checked int) {
	for i, x := range xs {
		y := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
		var want float32
		if x != x {
			want = vexp.Quiet(x)
		} else {
			w, ok := Eval(p, in[i])
			if !ok {
				continue
			}
			want = w
		}
		checked++
		if math.Float32bits(y) == math.Float32bits(want) || (x == x && want != want && y != y) {
			continue
		}
		if nbad < 3 {
			bad = append(bad, fmt.Sprintf("x = %v (bits %#x, post-op input %#x): got %v (bits %#x), Model %v (bits %#x)",
				x, math.Float32bits(x), math.Float32bits(in[i]), y, math.Float32bits(y), want, math.Float32bits(want)))
		}
		nbad++
	}
	return bad, nbad, checked
}

// opNames are the ops' Go names.
var opNames = map[vfn.Op]string{vfn.Const: "Const", vfn.Add: "Add", vfn.Sub: "Sub", vfn.Mul: "Mul", vfn.Div: "Div",
	vfn.FMA: "FMA", vfn.Abs: "Abs", vfn.Neg: "Neg", vfn.Min: "Min", vfn.Max: "Max", vfn.OrSign: "OrSign",
	vfn.Poly: "Poly", vfn.SelLT: "SelLT", vfn.SelLE: "SelLE", vfn.Exp: "Exp"}

// GoString returns p's steps as a Go []vfn.Step literal, for a
// regression case, one step a line with the value it defines.
func GoString(p *vfn.Program) string {
	var sb strings.Builder
	sb.WriteString("[]vfn.Step{\n")
	for i, s := range p.Steps {
		fmt.Fprintf(&sb, "\t{Op: vfn.%s", opNames[s.Op])
		switch s.Op {
		case vfn.Const:
			fmt.Fprintf(&sb, ", Bits: %#x", s.Bits)
		default:
			names := []string{"A", "B", "C", "D"}
			for j, v := range s.Operands() {
				if v != 0 {
					fmt.Fprintf(&sb, ", %s: %d", names[j], v)
				}
			}
		}
		if s.Coef != nil {
			fmt.Fprintf(&sb, ", Coef: %#v", s.Coef)
		}
		fmt.Fprintf(&sb, "}, // %d", i+1)
		if s.Op == vfn.Const {
			fmt.Fprintf(&sb, " = %v", math.Float32frombits(s.Bits))
		}
		sb.WriteString("\n")
	}
	sb.WriteString("}")
	return sb.String()
}

// Programs returns the programs a TestRandomPrograms runs: the fixed
// cases (Cases), then n random ones from seed, each bounded by a Config
// drawn so that most keep at most live values open at once besides x
// (an emitter's budget, less what a step needs of its own) and some
// (one in eight) keep one or two more, to reach past the temporaries.
func Programs(seed uint64, n, live int) []*vfn.Program {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	progs := Cases()
	for range n {
		cfg := Config{Steps: 1 + rng.IntN(16+2*live), MaxLive: 1 + rng.IntN(live), Exp: rng.IntN(3) == 0}
		if rng.IntN(8) == 0 {
			cfg.MaxLive = live + 1 + rng.IntN(2)
		}
		progs = append(progs, Random(rng, cfg))
	}
	return progs
}

// Cases returns fixed programs for the lowering paths that the real
// programs take rarely or never.
func Cases() []*vfn.Program {
	c := func(f float32) vfn.Step { return vfn.Step{Op: vfn.Const, Bits: math.Float32bits(f)} }
	cases := [][]vfn.Step{
		// A select whose result takes its C operand's register (C dies
		// there, A and B live on), then one whose result takes D's.
		{{Op: vfn.Mul, A: 0, B: 0}, {Op: vfn.Add, A: 0, B: 0}, {Op: vfn.SelLT, A: 0, B: 1, C: 2, D: 1}, {Op: vfn.Sub, A: 3, B: 1}},
		{{Op: vfn.Mul, A: 0, B: 0}, {Op: vfn.Add, A: 0, B: 0}, {Op: vfn.SelLE, A: 1, B: 0, C: 1, D: 2}, {Op: vfn.Sub, A: 3, B: 1}},
		// An FMA whose result takes B's register, C's, A's.
		{{Op: vfn.Mul, A: 0, B: 0}, {Op: vfn.Add, A: 0, B: 0}, {Op: vfn.FMA, A: 1, B: 2, C: 1}, {Op: vfn.Add, A: 3, B: 1}},
		{{Op: vfn.Mul, A: 0, B: 0}, {Op: vfn.Add, A: 0, B: 0}, {Op: vfn.FMA, A: 1, B: 1, C: 2}, {Op: vfn.Add, A: 3, B: 1}},
		{{Op: vfn.Mul, A: 0, B: 0}, {Op: vfn.Add, A: 0, B: 0}, {Op: vfn.FMA, A: 2, B: 1, C: 1}, {Op: vfn.Add, A: 3, B: 1}},
		// Both sides of a compare constant; constants in every slot.
		{c(1), c(2), {Op: vfn.SelLT, A: 1, B: 2, C: 0, D: 1}, {Op: vfn.SelLE, A: 2, B: 1, C: 2, D: 0}, {Op: vfn.Add, A: 3, B: 4}},
		{c(-0.5), c(3), c(0), {Op: vfn.SelLT, A: 1, B: 0, C: 2, D: 3}, {Op: vfn.SelLE, A: 0, B: 3, C: 1, D: 2},
			{Op: vfn.FMA, A: 1, B: 2, C: 3}, {Op: vfn.FMA, A: 1, B: 0, C: 3}, {Op: vfn.Add, A: 4, B: 5},
			{Op: vfn.Add, A: 8, B: 6}, {Op: vfn.Add, A: 9, B: 7}},
		{c(2), {Op: vfn.Exp, A: 1}, {Op: vfn.Poly, A: 1, Coef: []uint32{0x3f800000, 0x40000000}}, {Op: vfn.Add, A: 2, B: 3},
			{Op: vfn.Abs, A: 1}, {Op: vfn.Add, A: 4, B: 5}, {Op: vfn.OrSign, A: 1, B: 0}, {Op: vfn.Add, A: 6, B: 7},
			{Op: vfn.Neg, A: 1}, {Op: vfn.Add, A: 8, B: 9}, {Op: vfn.Sub, A: 1, B: 0}, {Op: vfn.Add, A: 10, B: 11},
			{Op: vfn.Div, A: 1, B: 0}, {Op: vfn.Add, A: 12, B: 13}, {Op: vfn.Min, A: 1, B: 0}, {Op: vfn.Add, A: 14, B: 15},
			{Op: vfn.Max, A: 0, B: 1}, {Op: vfn.Add, A: 16, B: 17}},
		// An exp and a polynomial of a value read after them (their
		// result must not take its register), and of x.
		{{Op: vfn.Add, A: 0, B: 0}, {Op: vfn.Exp, A: 1}, {Op: vfn.Poly, A: 1, Coef: []uint32{0x3f800000, 0xbf000000, 0x3e000000}},
			{Op: vfn.Add, A: 2, B: 1}, {Op: vfn.Sub, A: 4, B: 3}, {Op: vfn.Exp, A: 0}, {Op: vfn.Add, A: 6, B: 5}},
		// vfn.Model's FMA once rounded 3x + 2^-126 to even where 3x is
		// a tie of f32 values (x = 0x68c9a43e, 0x717ffffe), as if the
		// addend were 0: the machine code rounds up.
		{c(3), c(0x1p-126), {Op: vfn.FMA, A: 1, B: 0, C: 2}},
		// An operand read twice, and in every slot.
		{{Op: vfn.Add, A: 0, B: 0}, {Op: vfn.FMA, A: 1, B: 1, C: 1}, {Op: vfn.SelLE, A: 2, B: 2, C: 2, D: 2}, {Op: vfn.OrSign, A: 3, B: 3}},
	}
	var out []*vfn.Program
	for _, s := range cases {
		p := &vfn.Program{Kind: Kind, Steps: s}
		if err := Valid(p); err != nil {
			panic(err)
		}
		out = append(out, p)
	}
	return out
}

// Valid reports a step of p that reads a value not yet defined.
func Valid(p *vfn.Program) error {
	for i, s := range p.Steps {
		for _, v := range s.Operands() {
			if v < 0 || int(v) > i {
				return fmt.Errorf("vfntest: step %d reads value %d", i, v)
			}
		}
		if s.Op == vfn.Poly && len(s.Coef) == 0 {
			return fmt.Errorf("vfntest: step %d: a Poly without coefficients", i)
		}
	}
	return nil
}

// Check runs every program of progs through run, which emits the
// identity problem over xs with the program as Kind's and returns its
// output, or the emitter's error. The empty program's output gives the
// values the post-op sees (a NaN quietened; a -0 may come out of the
// identity's arithmetic as +0). Each program's output must then be what
// Compare expects; a program the emitter refuses must be refused
// cleanly, Unimplemented (too many temporaries), and is counted.
func Check(t testing.TB, xs []float32, progs []*vfn.Program, run func(p *vfn.Program) ([]byte, error)) {
	t.Helper()
	got, err := run(&vfn.Program{Kind: Kind})
	if err != nil {
		t.Fatalf("the empty program: %v", err)
	}
	in := make([]float32, len(xs))
	for i, x := range xs {
		in[i] = math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
		if math.Float32bits(in[i]) != math.Float32bits(vexp.PostOpInput(x)) {
			t.Fatalf("the empty program gives %v (bits %#x) for %v (bits %#x)", in[i], math.Float32bits(in[i]), x, math.Float32bits(x))
		}
	}
	refused, failed, lanes, checked := 0, 0, 0, 0
	for _, p := range progs {
		got, err := run(p)
		if err != nil {
			var e *status.Error
			if !errors.As(err, &e) || e.Status != status.Unimplemented {
				t.Errorf("%s\n: refused other than as Unimplemented: %v", GoString(p), err)
			}
			refused++
			continue
		}
		bad, nbad, n := Compare(p, xs, in, got)
		lanes += len(xs)
		checked += n
		if nbad > 0 {
			t.Errorf("program %s\n%d of %d lanes differ from vfn.Model:\n\t%s", GoString(p), nbad, n, strings.Join(bad, "\n\t"))
			if failed++; failed >= 3 {
				t.Fatalf("stopping after %d failing programs", failed)
			}
		}
	}
	t.Logf("%d programs, %d refused (too many temporaries); %d of %d lanes inside the contract and checked",
		len(progs), refused, checked, lanes)
}
