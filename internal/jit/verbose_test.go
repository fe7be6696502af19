package jit

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// captureVerbose sends verbose output at level to the buffer it returns
// until the test ends, then restores the level and the writer.
func captureVerbose(t testing.TB, level int) *bytes.Buffer {
	buf := &bytes.Buffer{}
	verboseMu.Lock()
	oldOut := verboseOut
	verboseOut = buf
	verboseMu.Unlock()
	prev := SetVerbose(level)
	t.Cleanup(func() {
		SetVerbose(prev)
		verboseMu.Lock()
		verboseOut = oldOut
		verboseMu.Unlock()
	})
	return buf
}

func TestVerboseLines(t *testing.T) {
	buf := captureVerbose(t, 1)
	withBudget(t, 4096)
	withThreads(t, 2)
	r := rand.New(rand.NewPCG(41, 42))
	c := spec{dims: []int64{3, 9000}, reduce: []bool{false, true}, sdt: dtypes.BF16, ddt: dtypes.BF16}.build(t, r)
	k := c.compile(t)
	dst := c.newDst()
	if err := k.Run(c.src, dst, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 verbose lines (compile, exec), got %d:\n%s", len(lines), buf.String())
	}
	impl := `(interp|jit:avx512|jit:avx2|jit:neon)`
	plan := regexp.QuoteMeta(k.pl.String())
	compile := regexp.MustCompile(`^gdnn_verbose,compile,cpu,reduction,` + impl + `,` + plan +
		`,split:2stage calls:\d+ phases:2 cache:(hit|miss),\d+\.\d{4}(,fallback: .+)?$`)
	exec := regexp.MustCompile(`^gdnn_verbose,exec,cpu,reduction,` + impl + `,` + plan +
		`,split:2stage calls:\d+ phases:2 threads:[12],\d+\.\d{4}$`)
	if !compile.MatchString(lines[0]) {
		t.Errorf("compile line %q does not match %s", lines[0], compile)
	}
	if !exec.MatchString(lines[1]) {
		t.Errorf("exec line %q does not match %s", lines[1], exec)
	}
	if k.Impl() == "interp" && !strings.Contains(lines[0], ",fallback: ") {
		t.Errorf("interp compile line does not say why: %q", lines[0])
	}
	SetVerbose(0)
	buf.Reset()
	if err := k.Run(c.src, dst, nil); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("verbose 0 still printed %q", buf.String())
	}
}

// TestVerboseConf checks that GDNN_VERBOSE=2 prints each JIT-compiled
// sub-plan's configuration on its compile_sub line: the emitter's target,
// shape and choices, as the chooser gives them.
func TestVerboseConf(t *testing.T) {
	buf := captureVerbose(t, 2)
	r := rand.New(rand.NewPCG(43, 44))
	// Rows of 5 f32: a group of V outputs on every vector ISA.
	c := spec{dims: []int64{4096, 5}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32}.build(t, r)
	k := c.compile(t)
	var subs []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.HasPrefix(l, "gdnn_verbose,compile_sub,") {
			subs = append(subs, l)
		}
	}
	if len(subs) != len(k.units) || len(subs) == 0 {
		t.Fatalf("want %d compile_sub lines, got:\n%s", len(k.units), buf.String())
	}
	for i, u := range k.units {
		e := u.e.Load()
		if !strings.HasPrefix(e.impl, "jit:") {
			if strings.Contains(subs[i], ",conf:") {
				t.Errorf("interpreter line with a conf: %q", subs[i])
			}
			continue
		}
		want := confOf(u.pl, u.hints, k.isa)
		if !strings.Contains(subs[i], ",conf:"+want) {
			t.Errorf("compile_sub line %q lacks conf %q", subs[i], want)
		}
		t.Log(subs[i])
		if !regexp.MustCompile(`^(avx512|avx512_bf16|avx2)/(intel|zen) row group=(16|8) |^neon row group=4 `).MatchString(want) {
			t.Errorf("conf %q is not rows of 5 in groups", want)
		}
	}
}

// TestVerboseArgAndNormLines checks that index kernels and fused
// normalization kernels report their compile and each execute as the
// reductions do (compileLine, execLine): the impl, the plan, the schedule,
// on every ISA and on the interpreter.
func TestVerboseArgAndNormLines(t *testing.T) {
	impl := `(interp|jit:avx512|jit:avx2|jit:neon)`
	check := func(t *testing.T, buf *bytes.Buffer, what, sched string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		compile := regexp.MustCompile(`^gdnn_verbose,compile,cpu,reduction,` + impl + `,` + regexp.QuoteMeta(what) + `,` +
			sched + ` cache:miss,\d+\.\d{4}(,fallback: .+)?$`)
		exec := regexp.MustCompile(`^gdnn_verbose,exec,cpu,reduction,` + impl + `,` + regexp.QuoteMeta(what) + `,` +
			sched + ` threads:\d+,\d+\.\d{4}$`)
		if len(lines) != 2 || !compile.MatchString(lines[0]) || !exec.MatchString(lines[1]) {
			t.Errorf("want a compile line matching %s and an exec line matching %s, got:\n%s", compile, exec, buf.String())
		}
		buf.Reset()
	}
	for _, isa := range []ISA{None, AVX512, AVX2, NEON} {
		if isa != None && (!supported(isa) || !underEnvCap(isa)) {
			continue
		}
		t.Run(isa.String(), func(t *testing.T) {
			prev := SetMaxISA(isa)
			defer SetMaxISA(prev)
			buf := captureVerbose(t, 1)

			pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: []int64{6, 5},
				SrcStrides: []int64{5, 1}, DstStrides: []int64{1, 0}, Axis: 1})
			if err != nil {
				t.Fatal(err)
			}
			k, err := CompileArg(pl)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Run(make([]byte, 4*30), make([]byte, 8*6)); err != nil {
				t.Fatal(err)
			}
			if k.Why() != "" && !strings.Contains(buf.String(), ",fallback: "+k.Why()) {
				t.Errorf("interpreter compile line does not say why: %q", buf.String())
			}
			check(t, buf, k.Plan().String(), `split:index`)

			n := &kernelshape.Norm{Kind: kernelshape.NormSoftmax, Plan: normPlan(t, 6, 5, nil)}
			nk, why, err := CompileNorm(n)
			if err != nil {
				t.Fatal(err)
			}
			if nk == nil {
				// No fused kernel (the interpreter): the caller's passes
				// compile and report their own kernels.
				if buf.Len() != 0 || why == "" {
					t.Errorf("no fused kernel (%q), yet printed %q", why, buf.String())
				}
				return
			}
			if err := nk.Run(make([]byte, 4*30), make([]byte, 4*30), nil, 0); err != nil {
				t.Fatal(err)
			}
			check(t, buf, n.Plan.String()+" norm=softmax", `split:fused-rows`)
		})
	}
}
