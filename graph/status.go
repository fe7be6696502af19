package graph

import "github.com/gdnn/gdnn/internal/status"

// Status classifies an error the way oneDNN's dnnl_status_t does. Every
// error gdnn returns wraps exactly one Status, so callers can branch with
// errors.Is(err, graph.InvalidShape) and read the message for the details.
// Its Error method returns oneDNN's name of the status, e.g.
// "invalid_shape".
type Status = status.Status

// The statuses, named after oneDNN's.
const (
	InvalidArguments Status = status.InvalidArguments
	Unimplemented    Status = status.Unimplemented
	InvalidGraph     Status = status.InvalidGraph
	InvalidGraphOp   Status = status.InvalidGraphOp
	InvalidShape     Status = status.InvalidShape
	InvalidDataType  Status = status.InvalidDataType
	OutOfMemory      Status = status.OutOfMemory
	RuntimeError     Status = status.RuntimeError
)

// Error is an error with a Status and a message that names what was wrong
// (the op, the tensor id, the offending value): fields Status and Msg.
// Its Error method formats it as "status: message", and errors.Is(err, s)
// is true for its Status s; errors.As(err, &e) with e a *graph.Error
// gives both.
type Error = status.Error

// Errorf returns an *Error with status s and a formatted message.
func Errorf(s Status, format string, args ...any) error {
	return status.Errorf(s, format, args...)
}
