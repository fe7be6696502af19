package partition_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestReadmeSnippets keeps README.md's Go code from rotting: its only ```go
// block must be the program made of Example's imports and body (in
// example_readme_test.go) as a main function, byte for byte. Example
// compiles and runs as a test, and its file holds nothing else, so the
// README's program compiles as written too. The section for frameworks
// (package reduce) is left out: reduce's TestReadmeSnippet checks its
// block against ExampleMean_bf16.
func TestReadmeSnippets(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(withoutSection(string(readme), reduceSection))
	want := exampleAsMain(t, "example_readme_test.go", "Example")
	if len(blocks) != 1 {
		t.Fatalf("README.md has %d ```go blocks, want 1 (the program below); a new one needs its own Example and a check here", len(blocks))
	}
	if blocks[0] != want {
		t.Errorf("README.md's ```go block differs from Example in example_readme_test.go; it should read:\n%s", want)
	}
}

// reduceSection is the README heading of package reduce's section.
const reduceSection = "## One call per reduction, for frameworks\n"

// withoutSection returns md less the section that starts at heading and
// runs to the next "## " heading (md as it is if there is none).
func withoutSection(md, heading string) string {
	before, rest, ok := strings.Cut(md, heading)
	if !ok {
		return md
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		return before + rest[i+1:]
	}
	return before
}

// goBlocks returns the contents of the ```go fenced blocks of a markdown text.
func goBlocks(md string) []string {
	var blocks []string
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(md, "\n") {
		fence := strings.TrimSpace(line)
		switch {
		case cur == nil && fence == "```go":
			cur = &strings.Builder{}
		case cur != nil && fence == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return blocks
}

// exampleAsMain turns the example function fn of file into a main package:
// the file's import declaration and fn's body, as written.
func exampleAsMain(t *testing.T, file, fn string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	text := func(from, to token.Pos) string {
		return string(src[fset.Position(from).Offset:fset.Position(to).Offset])
	}
	var imports, body string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok != token.IMPORT || imports != "" {
				t.Fatalf("%s: only one import declaration and %s may be there, so the README's program holds all it needs", file, fn)
			}
			imports = text(d.Pos(), d.End())
		case *ast.FuncDecl:
			if d.Name.Name != fn || d.Recv != nil {
				t.Fatalf("%s: %s is there besides %s; the README's program would not have it", file, d.Name.Name, fn)
			}
			body = text(d.Body.Lbrace, d.Body.End())
		}
	}
	if imports == "" || body == "" {
		t.Fatalf("%s: want one import declaration and func %s", file, fn)
	}
	return "package main\n\n" + imports + "\n\nfunc main() " + body + "\n"
}
