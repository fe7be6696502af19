package reduce

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeSnippet checks that the README's framework snippet is the
// body of ExampleMean_bf16, line for line, so that it compiles and runs
// as the example does and cannot drift from it.
func TestReadmeSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(ex), "func ExampleMean_bf16() {\n")
	body, _, ok2 := strings.Cut(body, "\t// Output:")
	if !ok || !ok2 {
		t.Fatal("ExampleMean_bf16 not found in example_test.go")
	}
	var want strings.Builder
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		want.WriteString(strings.TrimPrefix(l, "\t") + "\n")
	}
	_, sec, ok := strings.Cut(string(readme), "## One call per reduction, for frameworks\n")
	_, snippet, ok2 := strings.Cut(sec, "```go\n")
	snippet, _, ok3 := strings.Cut(snippet, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no Go snippet in its framework section")
	}
	if snippet != want.String() {
		t.Errorf("README snippet:\n%s\nExampleMean_bf16 body:\n%s", snippet, want.String())
	}
}
