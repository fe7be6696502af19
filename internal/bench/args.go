package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gdnn/gdnn/internal/status"
)

// Arg is one command-line or batch-file token and where it came from.
type Arg struct {
	Text string
	// Where is "file:line:col" for batch-file tokens, "argument N" for
	// command-line ones; Dir is the folder of the batch file ("" for the
	// command line), against which relative paths in the token resolve.
	Where string
	Dir   string
}

// InputError is malformed input: an unknown option, a bad value, a bad
// problem descriptor or an unreadable batch file. Main reports it with
// its position and exits with status 2.
type InputError struct {
	Where string
	Err   error
}

// Error formats the error as "where: message".
func (e *InputError) Error() string {
	if e.Where == "" {
		return e.Err.Error()
	}
	return e.Where + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(a Arg, format string, args ...any) error {
	return &InputError{Where: a.Where, Err: status.Errorf(status.InvalidArguments, format, args...)}
}

// wrapInput attaches a's position to err (unless it already has one).
func wrapInput(a Arg, err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	return &InputError{Where: a.Where, Err: err}
}

// CommandArgs turns os.Args-style arguments into Args.
func CommandArgs(args []string) []Arg {
	out := make([]Arg, len(args))
	for i, a := range args {
		out[i] = Arg{Text: a, Where: fmt.Sprintf("argument %d", i+1)}
	}
	return out
}

// TokenizeBatch splits batch-file text into tokens as benchdnn does:
// whitespace separates tokens and a token starting with '#' comments out
// the rest of its line. A token ending in '\' (or a lone '\') continues
// into the next token, joined without the backslash, as benchdnn's
// shell-style line break: oneDNN's test_lnorm_int8 spreads one --dt list
// over three lines that way. name labels positions (file:line:col,
// 1-based; a joined token has its first part's); dir is recorded for
// resolving relative paths.
func TokenizeBatch(text, name, dir string) []Arg {
	var out []Arg
	line, col := 1, 0
	var cur []rune
	startLine, startCol := 0, 0
	comment := false
	continued := false // the last token ended in '\'
	flush := func() {
		if len(cur) == 0 {
			return
		}
		t := string(cur)
		cur = cur[:0]
		if continued && len(out) > 0 {
			out[len(out)-1].Text += t
		} else {
			out = append(out, Arg{Text: t, Where: fmt.Sprintf("%s:%d:%d", name, startLine, startCol), Dir: dir})
		}
		last := &out[len(out)-1]
		continued = strings.HasSuffix(last.Text, "\\")
		if continued {
			last.Text = strings.TrimSuffix(last.Text, "\\")
			if last.Text == "" {
				// A lone backslash: the tokens either side of it join.
				out = out[:len(out)-1]
				continued = len(out) > 0
			}
		}
	}
	for _, r := range text {
		col++
		if r == '\n' {
			flush()
			comment = false
			line++
			col = 0
			continue
		}
		if comment {
			continue
		}
		if unicode.IsSpace(r) {
			flush()
			continue
		}
		if len(cur) == 0 {
			if r == '#' {
				comment = true
				continue
			}
			startLine, startCol = line, col
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// maxBatchBytes bounds a batch file. oneDNN's largest is under 100 KiB; the
// bound keeps a device such as /dev/zero or a mistyped data file from
// filling memory.
const maxBatchBytes = 16 << 20

var errTooLarge = errors.New("file too large")

// readCapped reads the file at path, or fails with errTooLarge once it has
// read more than limit bytes. Unlike os.ReadFile it stops on files that
// never end (/dev/zero, a FIFO fed forever).
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// readOnce is readCapped, once per path in a whole gdnnbench run: the dry
// pass and the run read a batch or case file from the same bytes, which
// a pipe (--batch=/dev/stdin, a shell's <(...)) gives only once.
func (r *runner) readOnce(path string, limit int64) ([]byte, error) {
	if data, ok := r.files[path]; ok {
		if int64(len(data)) > limit {
			return nil, errTooLarge
		}
		return data, nil
	}
	data, err := readCapped(path, limit)
	if err == nil {
		r.files[path] = data
	}
	return data, err
}

// inputsEnv names benchdnn-style inputs folders (a path list, like PATH),
// laid out as oneDNN's tests/benchdnn/inputs: <dir>/<driver>/<file>.
const inputsEnv = "GDNN_BENCHDNN_INPUTS"

// inputsDirs are the inputs folders searched for --batch files, in order:
// --inputs-dir, $GDNN_BENCHDNN_INPUTS, then benchdnn's own places, inputs
// and ../inputs beside the executable.
func inputsDirs(flag string) []string {
	var dirs []string
	if flag != "" {
		dirs = append(dirs, flag)
	}
	for _, d := range filepath.SplitList(os.Getenv(inputsEnv)) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		dirs = append(dirs, filepath.Join(dir, "inputs"), filepath.Join(dir, "..", "inputs"))
	}
	return dirs
}

// locateBatch finds a --batch file as benchdnn's locate_file does: an
// absolute path as it is; a relative one beside the including batch file
// (dir), then in the current directory, then in each inputs folder as
// <inputs>/<driver>/<name> (and <inputs>/<name>). It returns the path
// found, or every path tried.
func locateBatch(name, dir, driver string, inputs []string) (string, []string) {
	if filepath.IsAbs(name) {
		if fileExists(name) {
			return name, nil
		}
		return "", []string{name}
	}
	var tried []string
	try := func(p string) bool {
		tried = append(tried, p)
		return fileExists(p)
	}
	var cands []string
	if dir != "" {
		cands = append(cands, filepath.Join(dir, name))
	}
	cands = append(cands, name)
	for _, d := range inputs {
		if driver != "" {
			cands = append(cands, filepath.Join(d, driver, name))
		}
		cands = append(cands, filepath.Join(d, name))
	}
	for _, p := range cands {
		if try(p) {
			return p, nil
		}
	}
	return "", tried
}

// readBatch reads and tokenizes a batch file named by token a.
func (r *runner) readBatch(a Arg, name string) ([]Arg, error) {
	if name == "" {
		return nil, inputErr(a, "--batch needs a file name")
	}
	path, tried := locateBatch(name, a.Dir, r.driver, inputsDirs(r.g.inputsDir))
	if path == "" {
		for _, p := range tried {
			if isDir(p) {
				return nil, inputErr(a, "batch file %q: %s is a directory, not a file", name, p)
			}
		}
		return nil, inputErr(a, "cannot find batch file %q (tried %s; --inputs-dir or $%s name inputs folders laid out as <dir>/<driver>/<file>)",
			name, strings.Join(tried, ", "), inputsEnv)
	}
	data, err := r.readOnce(path, maxBatchBytes)
	if errors.Is(err, errTooLarge) {
		return nil, inputErr(a, "batch file %q is larger than %d MiB", name, maxBatchBytes>>20)
	}
	if err != nil {
		return nil, inputErr(a, "cannot read batch file %q: %v", name, errors.Unwrap(err))
	}
	if strings.IndexByte(string(data), 0) >= 0 {
		return nil, inputErr(a, "batch file %q is not text", name)
	}
	return TokenizeBatch(string(data), path, filepath.Dir(path)), nil
}
