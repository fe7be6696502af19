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
round=1 shape=B alg=mean dt=f32:f32 threads=1 onednn_impl=jit:avx512_core_bf16 onednn_us=3 gdnn_impl=jit:avx512 gdnn_us=2
round=2 shape=B alg=mean dt=f32:f32 threads=1 onednn_impl=jit:avx512_core_bf16 onednn_us=3 gdnn_impl=jit:avx512 gdnn_us=2
round=3 shape=B alg=mean dt=f32:f32 threads=1 onednn_impl=jit:avx512_core_bf16 onednn_us=3 gdnn_impl=jit:avx512 gdnn_us=4
round=1 shape=B alg=mean dt=f32:f32 threads=2 onednn_impl=jit:avx512_core_bf16 onednn_us=10 gdnn_impl=jit:avx512 gdnn_us=4.8
round=1 shape=B alg=logsumexp dt=f32:f32 threads=2 onednn_impl=NA onednn_us=NA gdnn_impl=jit:avx512 gdnn_us=5.8
`

func TestKinds(t *testing.T) {
	k, err := parseKinds(strings.NewReader(kindsRaw))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.keys) != 6 {
		t.Fatalf("keys %v, want 6", k.keys)
	}
	// Max over the mean within rounds 1, 4, 1: median 1 (the medians'
	// ratio, 4/2, would be 2). The mean has no ratio to itself.
	if x := k.overMean(kindKey{"B", "max", "f32:f32", 1}); !x.ok || !near(x.v, 1) {
		t.Errorf("B max 1T over the mean %v, want 1", x)
	}
	if x := k.overMean(kindKey{"B", "mean", "f32:f32", 1}); x.ok {
		t.Errorf("B mean over itself: %v", x)
	}
	if x := k.overMean(kindKey{"D", "sum", "u8:s32", 1}); x.ok {
		t.Errorf("D sum: no mean ran, ratio %v", x)
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
	renderKinds(&sb, k, map[string]int64{"B f32:f32": 1 << 20, "D u8:s32": 1 << 22})
	out := sb.String()
	for _, want := range []string{
		"| B | f32:f32 | max | jit:avx512_core_bf16 | 4.0 | 4.0 | 1.50x | 1.00 | 10.0 | 5.0 | 2.00x | 1.04 |",
		"| B | f32:f32 | logsumexp | - | - | - | - | - | - | 5.8 | - | 1.21 |",
		"| D | u8:s32 | sum | - | - | 7.0 | - | - | - | - | - | - |",
		"gdnn at least as fast as oneDNN in 4 of 4 cells where both ran.",
		"Where src is at least 1 MiB (the roofline's shapes), at most 1.10x the mean's time (its share of the\nroofline, within the rounds' spread) in 2 of 3 cells; above it in: B f32:f32 logsumexp 2T 1.21.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	// Below 1 MiB of src (in cache) the roofline, and so the mean's
	// share of it, does not apply: no cell is counted.
	sb.Reset()
	renderKinds(&sb, k, map[string]int64{"B f32:f32": 1<<20 - 1})
	if out := sb.String(); strings.Contains(out, "Where src") {
		t.Errorf("a shape under 1 MiB counted against the mean:\n%s", out)
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
