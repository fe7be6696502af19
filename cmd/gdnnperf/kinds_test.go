package main

import (
	"strings"
	"testing"
)

const kindsRaw = `== noise the script does not print is skipped
round=1 shape=B alg=max dt=f32:f32 threads=1 onednn_impl=jit:avx512_core_bf16 onednn_us=3 gdnn_impl=jit:avx512 gdnn_us=2
round=2 shape=B alg=max dt=f32:f32 threads=1 onednn_impl=jit:avx512_core_bf16 onednn_us=4 gdnn_impl=jit:avx512 gdnn_us=8
round=3 shape=B alg=max dt=f32:f32 threads=1 onednn_impl=jit:avx512_core_bf16 onednn_us=6 gdnn_impl=jit:avx512 gdnn_us=4
round=1 shape=B alg=max dt=f32:f32 threads=2 onednn_impl=jit:avx512_core_bf16 onednn_us=10 gdnn_impl=jit:avx512 gdnn_us=5
round=1 shape=D alg=sum dt=u8:s32 threads=1 onednn_impl=NA onednn_us=NA gdnn_impl=jit:avx2 gdnn_us=7
`

func TestKinds(t *testing.T) {
	k, err := parseKinds(strings.NewReader(kindsRaw))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.keys) != 3 {
		t.Fatalf("keys %v, want 3", k.keys)
	}
	// Within-round ratios 1.5, 0.5, 1.5: median 1.5 (the ratio of the
	// median times, 4/4, would be 1).
	if x := k.ratio(kindKey{"B", "max", "f32:f32", 1}); !x.ok || !near(x.v, 1.5) {
		t.Errorf("B max 1T ratio %v, want 1.5", x)
	}
	if x := k.ratio(kindKey{"D", "sum", "u8:s32", 1}); x.ok {
		t.Errorf("D sum: oneDNN did not run, ratio %v", x)
	}
	var sb strings.Builder
	renderKinds(&sb, k)
	out := sb.String()
	for _, want := range []string{
		"| B | f32:f32 | max | jit:avx512_core_bf16 | 4.0 | 4.0 | 1.50x | 10.0 | 5.0 | 2.00x |",
		"| D | u8:s32 | sum | - | - | 7.0 | - | - | - | - |",
		"gdnn at least as fast as oneDNN in 2 of 2 cells where both ran.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
}

func TestKindsErrors(t *testing.T) {
	for _, bad := range []string{
		"round=1 shape=B alg=max dt=f32:f32 threads=x onednn_us=1 gdnn_us=1\n",
		"round=1 shape=B dt=f32:f32 threads=1 onednn_us=1 gdnn_us=1\n",
		"round=1 shape=B alg=max dt=f32:f32 threads=1 onednn_us=-1 gdnn_us=1\n",
		"round=1 shape=B alg=max dt=f32:f32 threads=1 onednn_us=1 gdnn_us=abc\n",
		"round=0 shape=B alg=max dt=f32:f32 threads=1 onednn_us=1 gdnn_us=1\n",
	} {
		if _, err := parseKinds(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
