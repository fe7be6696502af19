package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gdnn/gdnn/graph"
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
	return &InputError{Where: a.Where, Err: graph.Errorf(graph.InvalidArguments, format, args...)}
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
// the rest of its line. name labels positions (file:line:col, 1-based);
// dir is recorded for resolving relative paths.
func TokenizeBatch(text, name, dir string) []Arg {
	var out []Arg
	line, col := 1, 0
	var cur []rune
	startLine, startCol := 0, 0
	comment := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, Arg{Text: string(cur), Where: fmt.Sprintf("%s:%d:%d", name, startLine, startCol), Dir: dir})
			cur = cur[:0]
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

// resolvePath finds a file named in a token: absolute paths as they are;
// relative ones against the including batch file's folder first, then the
// current directory. It returns the first that exists (or the name as
// given, for the error message).
func resolvePath(name, dir string) string {
	if filepath.IsAbs(name) || dir == "" {
		return name
	}
	if p := filepath.Join(dir, name); fileExists(p) {
		return p
	}
	return name
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
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

// readBatch reads and tokenizes a batch file named by token a.
func readBatch(a Arg, name string) ([]Arg, error) {
	if name == "" {
		return nil, inputErr(a, "--batch needs a file name")
	}
	path := resolvePath(name, a.Dir)
	data, err := readCapped(path, maxBatchBytes)
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
