package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
)

func TestParseSumPostOp(t *testing.T) {
	for _, c := range []struct {
		in    string
		scale float32
		zp    int64
		dt    dtypes.DataType
	}{
		{"sum", 1, 0, dtypes.Undef},
		{"sum:0.5", 0.5, 0, dtypes.Undef},
		{"sum:2:-3", 2, -3, dtypes.Undef},
		{"sum:1:0:f16", 1, 0, dtypes.F16},
	} {
		ops, err := ParsePostOps(c.in)
		if err != nil || len(ops) != 1 || !ops[0].IsSum() {
			t.Fatalf("%s: %v %v", c.in, ops, err)
		}
		if p := ops[0]; p.Scale != c.scale || p.ZeroPoint != c.zp || p.SumDT != c.dt {
			t.Errorf("%s: scale %v zp %v dt %v", c.in, p.Scale, p.ZeroPoint, p.SumDT)
		}
		if got := FormatPostOps(ops); got != c.in {
			t.Errorf("%s formats as %s", c.in, got)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"sum:1:x", "not a 32-bit integer"},
		{"sum:1:4294967296", "not a 32-bit integer"},
		{"sum:1:0:f99", "unknown data type"},
		{"sum:1:0:f32:x", "wants [SCALE"},
	} {
		if _, err := ParsePostOps(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.in, err, c.want)
		}
	}
	// The sum is an Add in the graph; its operand's type follows dst, or
	// is a type of dst's size.
	ops, _ := ParsePostOps("sum+sum:1:0:s32+sum:1:0:f32+sum:0.5+sum:1:2+sum:1:0:u8")
	if g, err := ops[0].toGraph(); err != nil || g.kind != graph.Add {
		t.Errorf("sum -> %v, %v; want Add", g.kind, err)
	}
	for _, c := range []struct {
		op     PostOp
		ddt    dtypes.DataType
		wantDT dtypes.DataType
		want   status.Status
	}{
		{ops[0], dtypes.BF16, dtypes.BF16, 0},
		{ops[0], dtypes.S8, dtypes.S8, 0},
		{ops[0], dtypes.S32, dtypes.S32, 0},
		{ops[1], dtypes.F32, dtypes.S32, 0},
		{ops[1], dtypes.S32, dtypes.S32, 0},
		{ops[1], dtypes.U8, 0, status.Unimplemented},
		{ops[2], dtypes.BF16, 0, status.Unimplemented},
		{ops[3], dtypes.F32, dtypes.F32, 0},
		{ops[4], dtypes.F32, dtypes.F32, 0},
		{ops[5], dtypes.S8, dtypes.U8, 0},
		{ops[5], dtypes.F16, 0, status.Unimplemented},
	} {
		dt, err := c.op.sumDT(c.ddt)
		if c.want == 0 {
			if err != nil || dt != c.wantDT {
				t.Errorf("%s on %v: %v, %v; want %v", c.op.Raw, c.ddt, dt, err, c.wantDT)
			}
		} else if !errors.Is(err, c.want) {
			t.Errorf("%s on %v: %v, want %v", c.op.Raw, c.ddt, err, c.want)
		}
	}
}

// TestSumPostOpRuns runs the sum post-op at every place of a chain, with
// and without a scale and a zero point, on every alg, f32, bf16 and f16
// data, plain and permuted layouts, in correctness and bitwise modes: all
// PASSED (the reference reads the dst as it was before the run, so a run
// that ignored it, or scaled it otherwise, would fail).
func TestSumPostOpRuns(t *testing.T) {
	for _, c := range []struct{ mode, algs, postOps string }{
		{"--mode=C", "sum,mul,max,min,mean,norm_lp_max,norm_lp_sum,norm_lp_power_p_max,norm_lp_power_p_sum",
			"sum,sum+relu,relu+sum,add:f32:per_oc+sum+linear:2:1+add:f32,sum:1:0:f32,sum+linear:0.5," +
				"sum:0.5,relu+sum:2:-3+square,sum:0.3:1:f32+linear:2:1+add:f32,sum+sum,sum:0.5+relu+sum:2:1+sum"},
		{"--mode=B", "sum,mean,norm_lp_sum", "sum+linear:2:1+add:f32,sum:0.5:1,sum+relu+sum:0.5"},
	} {
		mode := c.mode
		code, out, errw := runMain(t, "--reduction", mode, "--sdt=f32,bf16,f16", "--ddt=f32",
			"--alg="+c.algs, "--p=1,2", "--stag=abx,axb", "--dtag=any,axb", "--attr-post-ops="+c.postOps,
			"2x16x3x4:2x1x3x1", "3x70:1x70", "5x300:5x1")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, errw)
		}
		s := summary(t, out)
		if s[0] != s[1] || s[0] == "0" {
			t.Errorf("%s: summary %v, want every test passed\n%s", mode, s, out)
		}
	}
	// 16-bit outputs, the previous dst read as the dst's type or the other
	// 16-bit one.
	code, out, errw := runMain(t, "--reduction", "--sdt=bf16,f16", "--ddt=bf16,f16", "--alg=sum,mean,max",
		"--attr-post-ops=sum,sum:1:0:bf16+relu,sum:1:0:f16,sum:0.5:2:f16,sum:-1:0:bf16", "64x33:64x1", "600x20:1x20")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	if s := summary(t, out); s[1] == "0" || s[5] != "0" {
		t.Errorf("summary %v\n%s", s, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "__REPRO") && !strings.Contains(line, ":PASSED ") &&
			!strings.Contains(line, "must be") { // bf16 -> f16 is not a reduction gdnn takes
			t.Errorf("unexpected result: %s", line)
		}
	}
	// Integer outputs: the previous dst read as the dst's integers (or the
	// other 8-bit type), in place or scaled; integer binary operands.
	code, out, errw = runMain(t, "--reduction", "--mode=C", "--sdt=s8,u8", "--ddt=s8,u8,s32,f32", "--alg=sum,mean,max,min,mul",
		"--attr-post-ops=sum,relu+sum,sum+add:s8:per_oc,sum:1:0:u8,sum:0.5:3,mul:s32:per_oc+sum+sub:u8,div:s32,sum+sum:2:1",
		"4x16x3:4x1x3", "600x20:1x20", "2x3x300:2x3x1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	passed := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case !strings.Contains(line, "__REPRO"):
		case strings.Contains(line, ":PASSED "):
			passed++
		case strings.Contains(line, "UNIMPLEMENTED") && strings.Contains(line, "another size"):
		default:
			t.Errorf("unexpected result: %s", line)
		}
	}
	if passed < 300 {
		t.Errorf("%d integer problems passed\n%s", passed, out)
	}
}

// TestSumPostOpRefusals: what gdnn does not fuse says so.
func TestSumPostOpRefusals(t *testing.T) {
	for _, c := range []struct {
		args  []string
		state string
		why   string
	}{
		{[]string{"--ddt=bf16", "--sdt=bf16", "--attr-post-ops=sum:1:0:f32"}, "UNIMPLEMENTED", "another size"},
	} {
		args := append(append([]string{"--reduction"}, c.args...), "2x16:2x1")
		_, out, errw := runMain(t, args...)
		if !strings.Contains(out, "0:"+c.state+" ") || !strings.Contains(out, c.why) {
			t.Errorf("%v: want %s (%s):\n%s%s", c.args, c.state, c.why, out, errw)
		}
	}
}
