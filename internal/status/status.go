// Package status is gdnn's error vocabulary: oneDNN's statuses and the
// error that carries one with a message. It imports nothing of gdnn, so
// every layer (graph, partition, plan, the emitters, the runtime) can
// return errors that callers test with errors.Is(err, graph.InvalidShape):
// package graph re-exports these names for programs.
package status

import "fmt"

// Status classifies an error the way oneDNN's dnnl_status_t does. Every
// error gdnn returns wraps exactly one Status, so callers can branch with
// errors.Is(err, graph.InvalidShape) and read the message for the details.
type Status int

// The statuses, named after oneDNN's.
const (
	InvalidArguments Status = iota + 1
	Unimplemented
	InvalidGraph
	InvalidGraphOp
	InvalidShape
	InvalidDataType
	OutOfMemory
	RuntimeError
)

var statusNames = map[Status]string{
	InvalidArguments: "invalid_arguments",
	Unimplemented:    "unimplemented",
	InvalidGraph:     "invalid_graph",
	InvalidGraphOp:   "invalid_graph_op",
	InvalidShape:     "invalid_shape",
	InvalidDataType:  "invalid_data_type",
	OutOfMemory:      "out_of_memory",
	RuntimeError:     "runtime_error",
}

// Error returns oneDNN's name of the status, e.g. "invalid_shape".
func (s Status) Error() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// Error is an error with a Status and a message that names what was wrong
// (the op, the tensor id, the offending value).
type Error struct {
	Status Status
	Msg    string
}

// Error formats the error as "status: message".
func (e *Error) Error() string { return e.Status.Error() + ": " + e.Msg }

// Is makes errors.Is(err, s) true for the error's Status s.
func (e *Error) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Status
}

// Errorf returns an *Error with status s and a formatted message.
func Errorf(s Status, format string, args ...any) error {
	return &Error{Status: s, Msg: fmt.Sprintf(format, args...)}
}
