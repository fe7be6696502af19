package jit_test

import (
	"fmt"

	"github.com/gdnn/gdnn/jit"
)

// Capping the instruction set to none makes every new compile use the
// interpreter, as GDNN_MAX_CPU_ISA=none does; the previous cap comes
// back from SetMaxISA to be restored.
func ExampleSetMaxISA() {
	prev := jit.SetMaxISA(jit.None)
	fmt.Println("new compiles use:", jit.EffectiveISA())
	jit.SetMaxISA(prev)
	// Output: new compiles use: none
}

// ParseISA takes oneDNN's spellings too, so a value of
// ONEDNN_MAX_CPU_ISA can be passed on.
func ExampleParseISA() {
	for _, s := range []string{"avx2", "AVX512_CORE_BF16", "neon"} {
		i, err := jit.ParseISA(s)
		fmt.Println(s, "->", i, err)
	}
	_, err := jit.ParseISA("sse4")
	fmt.Println(err)
	// Output:
	// avx2 -> avx2 <nil>
	// AVX512_CORE_BF16 -> avx512 <nil>
	// neon -> neon <nil>
	// invalid_arguments: unknown ISA "sse4" (want none, avx2, avx512, neon or all)
}
