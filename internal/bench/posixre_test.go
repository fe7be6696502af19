package bench

import (
	"errors"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

// breCases were checked against glibc's regcomp(pattern, 0) + regexec,
// which is what benchdnn runs on Linux.
var breCases = []struct {
	pattern, subject string
	match            bool
}{
	{"relu+add", "--attr-post-ops=relu+add:f32 2x3:2x1", true},
	{"relu+add", "--attr-post-ops=reluadd 2x3:2x1", false},
	{`relu\+add`, "reluuuadd", true},
	{`relu\+add`, "relu+add", false},
	{"a?b", "a?b", true},
	{"a?b", "b", false},
	{`a\?b`, "b", true},
	{"(2x)", "(2x)", true},
	{"(2x)", "2x", false},
	{`\(2x\)\{2\}`, "2x2x3", true},
	{`\(2x\)\{2\}`, "2x3", false},
	{`x\{2,\}`, "axxb", true},
	{`x\{2,\}`, "axb", false},
	{`x\{,1\}y`, "y", true},
	{"a{2}", "a{2}", true},
	{"a{2}", "aa", false},
	{"a|b", "a|b", true},
	{"a|b", "a", false},
	{`f16\|bf16`, "--sdt=bf16", true},
	{`f16\|bf16`, "--sdt=f32", false},
	{"*a", "*a", true},
	{"*a", "a", false},
	{`\(*a\)`, "x*a", true},
	{"^*a", "*a", true},
	{"^--sdt", "--sdt=f32", true},
	{"^--sdt", " --sdt=f32", false},
	{"a^b", "a^b", true},
	{"a$b", "a$b", true},
	{"x1$", "2x3:2x1", true},
	{"x1$", "2x1:2x3", false},
	{`\(x1$\)`, "2x1", true},
	{`x1$\|zz`, "2x1", true},
	{"2x.:", "2x3:2x1", true},
	{"2x[0-9]*:", "2x34:2x1", true},
	{"[[:digit:]]x1", "2x1", true},
	{"[[:alpha:]]x1", "2x1", false},
	{`[\]x`, `\x`, true},
	{`[\]x`, "]x", false},
	{"[]a]x", "]x", true},
	{"[^]a]x", "]x", false},
	{"[^]a]x", "bx", true},
	{"[a-]x", "-x", true},
	{"[[.-.]]x", "-x", true},
	{"[[=a=]]x", "ax", true},
	{`\.`, "a", false},
	{`\.`, ".", true},
	{`\n`, "n", true},
	{`\w\W`, "a-", true},
	{`\s`, "a b", true},
	{`\S`, "   ", false},
	{`\bsdt`, "--sdt", true},
	{`\Bsdt`, "--sdt", false},
	{"\\`--", "--sdt", true},
	{"\\`sdt", "--sdt", false},
	{`1\'`, "2x1", true},
	{"", "anything", true},
}

func TestMatchBRE(t *testing.T) {
	for _, c := range breCases {
		re, err := compileMatch(c.pattern)
		if err != nil {
			t.Errorf("%q: %v", c.pattern, err)
			continue
		}
		if got := re.MatchString(c.subject); got != c.match {
			t.Errorf("%q on %q: match %v, want %v (as RE2: %s)", c.pattern, c.subject, got, c.match, re)
		}
	}
}

// TestMatchBRERefused: what glibc refuses is InvalidArguments, what it
// takes but Go cannot express is Unimplemented; none compiles to
// something else.
func TestMatchBRERefused(t *testing.T) {
	cases := []struct {
		pattern string
		status  status.Status
	}{
		{`\(a`, status.InvalidArguments},
		{`a\)`, status.InvalidArguments},
		{`a\`, status.InvalidArguments},
		{"[a", status.InvalidArguments},
		{"[]", status.InvalidArguments},
		{"[z-a]", status.InvalidArguments},
		{"[[:nope:]]", status.InvalidArguments},
		{"[[:alpha:]-z]", status.InvalidArguments},
		{"[a-[:alpha:]]", status.InvalidArguments},
		{"[[:alpha:]", status.InvalidArguments},
		{`a\{2`, status.InvalidArguments},
		{`a\{x\}`, status.InvalidArguments},
		{`a\{3,2\}`, status.InvalidArguments},
		{`a\{\}`, status.InvalidArguments},
		{`a\{99999\}`, status.InvalidArguments},
		{`\(a\)\1`, status.Unimplemented},
		{`\<sdt`, status.Unimplemented},
		{`sdt\>`, status.Unimplemented},
		{`a\{1001\}`, status.Unimplemented},
		{`a\{1,1001\}`, status.Unimplemented},
		{"[[.space.]]", status.InvalidArguments},
		{"a**", status.InvalidArguments},
		{`a*\{2\}`, status.InvalidArguments},
		{`a\+*`, status.InvalidArguments},
	}
	for _, c := range cases {
		re, err := compileMatch(c.pattern)
		if err == nil {
			t.Errorf("%q: compiled to %s, want an error", c.pattern, re)
			continue
		}
		if !errors.Is(err, c.status) {
			t.Errorf("%q: %v, want status %v", c.pattern, err, c.status)
		}
	}
}

// TestMatchBRENoPanic: every pattern of up to three characters from the
// dialect's special characters compiles or is refused with a status; none
// panics. (The same set up to four characters, over fifteen subjects, was
// checked against glibc's regcomp/regexec: they agree except for the
// refused back-references.)
func TestMatchBRENoPanic(t *testing.T) {
	alpha := []rune(`a\(){}[]^$*+?|.-:=1,`)
	var rec func(p []rune)
	rec = func(p []rune) {
		if _, err := compileMatch(string(p)); err != nil && !errors.Is(err, status.InvalidArguments) && !errors.Is(err, status.Unimplemented) {
			t.Errorf("%q: error without a status: %v", string(p), err)
		}
		if len(p) < 3 {
			for _, c := range alpha {
				rec(append(p, c))
			}
		}
	}
	rec(nil)
}
