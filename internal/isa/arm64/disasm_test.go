package arm64

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// objdumpName is binutils' AArch64 disassembler (Debian package
// binutils-aarch64-linux-gnu). It decodes independently of golang-asm,
// so it checks both the assembler's output and the raw words.
const objdumpName = "aarch64-linux-gnu-objdump"

// insn is one disassembled instruction.
type insn struct {
	word uint32 // as objdump prints it
	text string // mnemonic and operands, tabs turned into spaces
}

// disassemble runs objdump over code and returns its instructions.
func disassemble(t *testing.T, code []byte) []insn {
	t.Helper()
	var ins []insn
	for _, parts := range kerneltest.Objdump(t, objdumpName, "apt-get install binutils-aarch64-linux-gnu", "aarch64", code) {
		// "   1c:\t4e30d400 \tfadd\tv0.4s, v0.4s, v16.4s"
		var w uint32
		for _, c := range strings.TrimSpace(parts[1]) {
			w = w<<4 | uint32(strings.IndexRune("0123456789abcdef", c))
		}
		text := strings.Join(strings.Fields(strings.Join(parts[2:], " ")), " ")
		// Drop objdump's comments ("// #4", "// b.any").
		if i := strings.Index(text, " //"); i >= 0 {
			text = text[:i]
		}
		ins = append(ins, insn{w, text})
	}
	if len(ins)*4 != len(code) {
		t.Fatalf("objdump decoded %d instructions from %d bytes", len(ins), len(code))
	}
	return ins
}

// reserved matches the registers a kernel must not touch: the platform
// register, g, the frame pointer, the link register and the stack.
var reserved = regexp.MustCompile(`\b([xw](18|28|29|30)|sp|wsp)\b`)

// TestDisassembly checks emitted kernels with an independent decoder on
// every GOARCH: every word decodes to a known instruction, the key
// instructions of each shape are there, no reserved register appears,
// and the kernel ends in its only RET.
func TestDisassembly(t *testing.T) {
	mk := kerneltest.PlanMaker(t)
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	cases := []struct {
		name string
		pl   *plan.Plan
		want []string
	}{
		{"row grouped f32", mk(f32, f32, []int64{72, 240}, []int64{240, 1}, []bool{false, true}, []int64{1, 0}),
			[]string{"ld1 {v16.4s-v19.4s}, [x1], #64", "fadd v", "faddp v0.4s, v0.4s, v2.4s", "fdiv v0.4s, v0.4s, v26.4s", "str q0, [x2]"}},
		{"row long bf16", mk(bf16, bf16, []int64{4, 1000}, []int64{1000, 1}, []bool{false, true}, []int64{1, 0},
			plan.PostOp{Kind: ops.Round}),
			[]string{"ld1 {v16.8h-v19.8h}, [x1], #64", "shll2 v20.4s, v16.8h, #16", "shll v16.4s, v16.4h, #16", "faddp", "frintn", "ushr", "uzp2", "bif", "str h"}},
		{"column f16 max", mk(f16, f16, []int64{64, 100}, []int64{100, 1}, []bool{true, false}, []int64{0, 1},
			plan.PostOp{Kind: ops.Maximum, BinDT: f32, BinStrides: []int64{0, 1}}),
			[]string{"ld1 {v16.8h-v19.8h}, [x1], #64", "fcvtl2 v20.4s, v16.8h", "fcvtl v16.4s, v16.4h", "ldr d16, [x1]", "fcvtn", "fmax", "ldr q16, [x3, #16]", "str d"}},
		{"column bf16 wide", mk(bf16, f32, []int64{8, 300}, []int64{300, 1}, []bool{true, false}, []int64{0, 1},
			plan.PostOp{Kind: ops.Clamp, Alpha: -1, Beta: 1}),
			[]string{"shll", "fcmgt", "bit v", "str q"}},
		{"flat column f32", mk(f32, f32, []int64{100, 2}, []int64{2, 1}, []bool{true, false}, []int64{0, 1},
			plan.PostOp{Kind: ops.LeakyReLU, Alpha: 0.5}),
			[]string{"ext v", "fcmlt", "fmul", "str d"}},
		{"element f32", mk(f32, f32, []int64{5, 9}, []int64{18, 2}, []bool{false, true}, []int64{1, 0},
			plan.PostOp{Kind: ops.ReLU}, plan.PostOp{Kind: ops.Sqrt}, plan.PostOp{Kind: ops.Abs}),
			[]string{"ldr s", "fcmle", "bic v", "fsqrt", "fabs", "str s"}},
		{"strided dst f16 operand", mk(f32, f32, []int64{4, 7}, []int64{7, 1}, []bool{true, false}, []int64{0, 2},
			plan.PostOp{Kind: ops.Divide, BinDT: f16, BinStrides: []int64{0, 3}}, plan.PostOp{Kind: ops.Subtract, BinDT: bf16, BinStrides: []int64{0, 0}},
			plan.PostOp{Kind: ops.Minimum, BinDT: f32, BinStrides: []int64{0, 1}}, plan.PostOp{Kind: ops.Square}),
			[]string{"dup v", "ldr h", "fdiv", "fsub", "fmin", "fmul"}},
		{"exp f32", mk(f32, f32, []int64{40}, []int64{1}, []bool{false}, []int64{1}, plan.PostOp{Kind: ops.Exp}),
			[]string{"fmin v", "fmax v", "frintn v", "fmla v", "fcvtns v", "sshr v", "#1", "sub v", "shl v", "#23", "add v",
				"fcmeq v", "bif v"}},
		{"hardsigmoid hardswish f16", mk(f16, f16, []int64{40}, []int64{1}, []bool{false}, []int64{1},
			plan.PostOp{Kind: ops.HardSigmoid, Alpha: 0.2, Beta: 0.5}, plan.PostOp{Kind: ops.HardSwish}),
			[]string{".2d, v8.2s", ".2d, v8.4s", "mov x16, #0x4018000000000000", ".2d, x16", "fmul v16.2d", "fadd v16.2d",
				"fcmlt v18.2d, v16.2d, #0.0", "fcmgt v18.2d", "fdiv v18.2d", "fcmge v19.2d", "bif v16.16b", "fcmle v19.2d",
				"bic v17.16b", "fcvtn v8.2s", "fcvtn2 v8.4s"}},
		{"log f32", mk(f32, f32, []int64{40}, []int64{1}, []bool{false}, []int64{1}, plan.PostOp{Kind: ops.Log}),
			[]string{"fcmgt v", "fmul v", "bit v", "and v", "sub v", "sshr v", "#23", "scvtf v", "add v", "fsub v", "fmla v",
				"fadd v", "fcmle v", "fcmlt v", "bif v"}},
	}
	for _, c := range cases {
		code, err := Emit(c.pl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ins := disassemble(t, code.Text)
		var text []string
		for i, in := range ins {
			text = append(text, in.text)
			if strings.HasPrefix(in.text, ".inst") || strings.Contains(in.text, "undefined") || in.word == 0 {
				t.Errorf("%s: word %d (%08x) does not decode: %q", c.name, i, in.word, in.text)
			}
			if reserved.MatchString(in.text) {
				t.Errorf("%s: word %d uses a reserved register: %q", c.name, i, in.text)
			}
			if in.text == "ret" && i != len(ins)-1 {
				t.Errorf("%s: RET at word %d of %d", c.name, i, len(ins))
			}
		}
		all := strings.Join(text, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, all)
			}
		}
		if ins[len(ins)-1].text != "ret" {
			t.Errorf("%s: kernel ends with %q", c.name, ins[len(ins)-1].text)
		}
	}
}

// TestDisassemblyRandom disassembles the kernels of random plans: every
// word must decode and no reserved register may appear.
func TestDisassemblyRandom(t *testing.T) {
	r := newRand(13)
	var code []byte
	for i := 0; i < 60; i++ {
		pl, err := plan.Canonicalize(randomProblem(r, 3000))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Emit(pl)
		if err != nil {
			t.Fatalf("Emit(%v): %v", pl, err)
		}
		code = append(code, b.Text...)
	}
	for i, in := range disassemble(t, code) {
		if strings.HasPrefix(in.text, ".inst") || strings.Contains(in.text, "undefined") || in.word == 0 {
			t.Errorf("word %d (%08x) does not decode: %q", i, in.word, in.text)
		}
		if reserved.MatchString(in.text) {
			t.Errorf("word %d uses a reserved register: %q", i, in.text)
		}
	}
}
