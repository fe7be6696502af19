package bench

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// compileMatch compiles a --match pattern in benchdnn's dialect. On Linux
// benchdnn compiles --match with regcomp(pattern, 0): a POSIX basic
// regular expression (BRE) with glibc's extensions, searched anywhere in
// the problem string. gdnn translates the BRE into Go's RE2 syntax:
//
//   - + ? | { } ( ) are ordinary characters; \+ \? \| \{m,n\} \( \) are
//     the operators (so --match=relu+add matches the text "relu+add");
//   - * (and \+, \?) at the start of an expression, after \( or \|, or
//     after an anchor is an ordinary character;
//   - ^ is an anchor only at the start of an expression (or after \( or
//     \|), $ only at its end (or before \) or \|); elsewhere they are
//     ordinary characters;
//   - a backslash inside a bracket expression is an ordinary character;
//     [:class:], [=c=] and [.c.] work (C locale, single characters);
//   - \w \W \s \S \b \B \` \' are glibc's; \ before any other ordinary
//     character is that character.
//
// What RE2 cannot do is refused with graph.Unimplemented rather than
// approximated: back-references (\1 to \9), the word anchors \< and \>
// and repeat counts above 1000. What glibc refuses (unbalanced \( \), an
// unterminated bracket or interval, a trailing backslash, a reversed
// range, a repeated repetition such as a**) is graph.InvalidArguments,
// where benchdnn would print "could not create regex" and run every
// problem.
func compileMatch(pattern string) (*regexp.Regexp, error) {
	re, err := translateBRE(pattern)
	if err != nil {
		return nil, err
	}
	// (?s): without REG_NEWLINE a POSIX '.' matches a newline too.
	return regexp.Compile("(?s)" + re)
}

// breParser walks a BRE and writes the equivalent RE2 pattern.
type breParser struct {
	src []rune
	pos int
	out strings.Builder
	// atom is where the last repeatable item starts in out (-1: none,
	// so a repetition operator here is an ordinary character); reps says
	// whether that item already carries a repetition (glibc refuses a**).
	atom int
	reps bool
	// begin: a new expression starts here (at the start, after \( or
	// \|), where ^ is an anchor.
	begin bool
	// groups holds where each open \( starts in out.
	groups []int
}

func badMatch(format string, args ...any) error {
	return status.Errorf(status.InvalidArguments, "--match: "+format, args...)
}

func unimplMatch(format string, args ...any) error {
	return status.Errorf(status.Unimplemented, "--match: "+format, args...)
}

func translateBRE(pattern string) (string, error) {
	p := &breParser{src: []rune(pattern), atom: -1, begin: true}
	if err := p.parse(); err != nil {
		return "", err
	}
	return p.out.String(), nil
}

// exprEnd says the next token ends an expression: the end of the
// pattern, \) or \|.
func (p *breParser) exprEnd(i int) bool {
	if i >= len(p.src) {
		return true
	}
	return p.src[i] == '\\' && i+1 < len(p.src) && (p.src[i+1] == ')' || p.src[i+1] == '|')
}

// literal writes one ordinary character as a repeatable atom.
func (p *breParser) literal(r rune) {
	p.atom, p.reps = p.out.Len(), false
	p.out.WriteString(regexp.QuoteMeta(string(r)))
}

// noAtom marks that no repetition may follow (after an anchor or at the
// start of an expression).
func (p *breParser) noAtom() { p.atom, p.reps = -1, false }

// repeat applies op (*, +, ?, {m,n}) to the last atom, or writes c as
// an ordinary character when there is none.
func (p *breParser) repeat(op string, c rune) error {
	if p.atom < 0 {
		p.literal(c)
		return nil
	}
	if p.reps {
		// glibc takes a*\+ and a*\? (as (a*)+ and (a*)?) but refuses
		// a** and a*\{2\}.
		if op != "+" && op != "?" {
			return badMatch("repetition of a repetition (%s) in %q", op, string(p.src))
		}
		s := p.out.String()
		p.out.Reset()
		p.out.WriteString(s[:p.atom] + "(?:" + s[p.atom:] + ")")
	}
	p.out.WriteString(op)
	p.reps = true
	return nil
}

func (p *breParser) parse() error {
	for p.pos < len(p.src) {
		start := p.begin
		p.begin = false
		c := p.src[p.pos]
		p.pos++
		switch c {
		case '*':
			if err := p.repeat("*", '*'); err != nil {
				return err
			}
		case '^':
			if start {
				p.out.WriteString("^")
				p.noAtom()
			} else {
				p.literal('^')
			}
		case '$':
			if p.exprEnd(p.pos) {
				p.out.WriteString("$")
				p.noAtom()
			} else {
				p.literal('$')
			}
		case '.':
			p.atom, p.reps = p.out.Len(), false
			p.out.WriteString(".")
		case '[':
			at := p.out.Len()
			if err := p.bracket(); err != nil {
				return err
			}
			p.atom, p.reps = at, false
		case '\\':
			if err := p.escape(); err != nil {
				return err
			}
		default:
			p.literal(c)
		}
	}
	if len(p.groups) > 0 {
		return badMatch("unmatched \\( in %q", string(p.src))
	}
	return nil
}

// escape handles the character after a backslash.
func (p *breParser) escape() error {
	if p.pos >= len(p.src) {
		return badMatch("trailing backslash in %q", string(p.src))
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '(':
		p.groups = append(p.groups, p.out.Len())
		p.out.WriteString("(")
		p.noAtom()
		p.begin = true
	case ')':
		if len(p.groups) == 0 {
			return badMatch("unmatched \\) in %q", string(p.src))
		}
		p.out.WriteString(")")
		p.atom, p.reps = p.groups[len(p.groups)-1], false
		p.groups = p.groups[:len(p.groups)-1]
	case '|':
		p.out.WriteString("|")
		p.noAtom()
		p.begin = true
	case '+', '?':
		return p.repeat(string(c), c)
	case '{':
		if p.atom < 0 {
			return badMatch("\\{ with nothing to repeat in %q", string(p.src))
		}
		op, err := p.interval()
		if err != nil {
			return err
		}
		return p.repeat(op, '{')
	case '}':
		p.literal('}')
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return unimplMatch("back-reference \\%c: Go's regular expressions have none", c)
	case '<', '>':
		return unimplMatch("word anchor \\%c: Go's regular expressions have none (\\b is supported)", c)
	case 'b', 'B':
		p.out.WriteString(`\` + string(c))
		p.noAtom()
	case '`':
		p.out.WriteString(`\A`)
		p.noAtom()
	case '\'':
		p.out.WriteString(`\z`)
		p.noAtom()
	case 'w', 'W', 's', 'S':
		p.atom, p.reps = p.out.Len(), false
		p.out.WriteString(map[rune]string{'w': `[0-9A-Za-z_]`, 'W': `[^0-9A-Za-z_]`,
			's': `[\t\n\v\f\r ]`, 'S': `[^\t\n\v\f\r ]`}[c])
	default:
		p.literal(c)
	}
	return nil
}

// maxRepeat is RE2's bound on a repeat count (glibc's is 32767).
const maxRepeat = 1000

// interval reads "m\}", "m,\}", "m,n\}" or ",n\}" after "\{".
func (p *breParser) interval() (string, error) {
	end := -1
	for i := p.pos; i+1 < len(p.src); i++ {
		if p.src[i] == '\\' && p.src[i+1] == '}' {
			end = i
			break
		}
	}
	if end < 0 {
		return "", badMatch("unterminated \\{ in %q", string(p.src))
	}
	body := string(p.src[p.pos:end])
	p.pos = end + 2
	lo, hi, comma := body, "", false
	if i := strings.IndexByte(body, ','); i >= 0 {
		lo, hi, comma = body[:i], body[i+1:], true
	}
	num := func(s string, def int) (int, error) {
		if s == "" {
			return def, nil
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return 0, badMatch("bad interval \\{%s\\}", body)
			}
		}
		n, err := strconv.Atoi(s)
		if err != nil || n > 32767 {
			return 0, badMatch("interval \\{%s\\} is larger than 32767", body)
		}
		return n, nil
	}
	m, err := num(lo, 0)
	if err != nil {
		return "", err
	}
	if !comma {
		if lo == "" {
			return "", badMatch("bad interval \\{%s\\}", body)
		}
		if m > maxRepeat {
			return "", unimplMatch("repeat count %d: Go's regular expressions stop at %d", m, maxRepeat)
		}
		return "{" + lo + "}", nil
	}
	n, err := num(hi, -1)
	if err != nil {
		return "", err
	}
	if n >= 0 && n < m {
		return "", badMatch("interval \\{%s\\} has its maximum below its minimum", body)
	}
	if m > maxRepeat || n > maxRepeat {
		return "", unimplMatch("repeat count above %d in \\{%s\\}: Go's regular expressions stop there", maxRepeat, body)
	}
	if n < 0 {
		return "{" + strconv.Itoa(m) + ",}", nil
	}
	return "{" + strconv.Itoa(m) + "," + strconv.Itoa(n) + "}", nil
}

// posixClasses are the character classes POSIX names; RE2 knows them
// all by the same names.
var posixClasses = map[string]bool{"alnum": true, "alpha": true, "blank": true, "cntrl": true, "digit": true,
	"graph": true, "lower": true, "print": true, "punct": true, "space": true, "upper": true, "xdigit": true}

// bracket translates a bracket expression; p.pos is just after '['.
// Inside it a backslash is an ordinary character, ']' first (after an
// optional '^') is a member, '-' first or last is a member.
func (p *breParser) bracket() error {
	var b strings.Builder
	b.WriteString("[")
	if p.pos < len(p.src) && p.src[p.pos] == '^' {
		b.WriteString("^")
		p.pos++
	}
	for first := true; ; first = false {
		if p.pos >= len(p.src) {
			return badMatch("unterminated [ in %q", string(p.src))
		}
		if p.src[p.pos] == ']' && !first {
			p.pos++
			break
		}
		c, class, err := p.bracketItem()
		if err != nil {
			return err
		}
		if class != "" {
			b.WriteString("[:" + class + ":]")
			if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
				return badMatch("a character class cannot start a range in %q", string(p.src))
			}
			continue
		}
		// A range c-d, unless '-' is the last member.
		if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			d, class, err := p.bracketItem()
			if err != nil {
				return err
			}
			if class != "" {
				return badMatch("a character class cannot end a range in %q", string(p.src))
			}
			if d < c {
				return badMatch("range %c-%c is reversed", c, d)
			}
			b.WriteString(classChar(c) + "-" + classChar(d))
			continue
		}
		b.WriteString(classChar(c))
	}
	b.WriteString("]")
	p.out.WriteString(b.String())
	return nil
}

// bracketItem reads one member of a bracket expression: a character,
// [=c=] or [.c.] (c itself in the C locale), or [:class:].
func (p *breParser) bracketItem() (rune, string, error) {
	c := p.src[p.pos]
	if c != '[' || p.pos+1 >= len(p.src) || !strings.ContainsRune(":=.", p.src[p.pos+1]) {
		p.pos++
		return c, "", nil
	}
	kind := p.src[p.pos+1]
	end := -1
	for i := p.pos + 2; i+1 < len(p.src); i++ {
		if p.src[i] == kind && p.src[i+1] == ']' {
			end = i
			break
		}
	}
	if end < 0 {
		return 0, "", badMatch("unterminated [%c in %q", kind, string(p.src))
	}
	name := p.src[p.pos+2 : end]
	p.pos = end + 2
	if kind == ':' {
		if !posixClasses[string(name)] {
			return 0, "", badMatch("unknown character class [:%s:]", string(name))
		}
		return 0, string(name), nil
	}
	if len(name) != 1 {
		return 0, "", badMatch("unknown collating element [%c%s%c] (the C locale has single characters only)", kind, string(name), kind)
	}
	return name[0], "", nil
}

// classChar writes r so that RE2 reads it as itself inside [...].
func classChar(r rune) string {
	if strings.ContainsRune(`\]-[^`, r) {
		return `\` + string(r)
	}
	return string(r)
}
