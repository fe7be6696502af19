package partition

import (
	"errors"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/blocked"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/layout"
)

// Blocked layouts (graph.LayoutBlocked: a oneDNN format tag with inner
// blocks) are taken for the reduction's src and for the partition's
// output; binary post-op operands stay strided. Such a partition runs
// through package internal/blocked, which turns the blocks into strided dims
// of plain problems for the same kernels.

// blockedLayout parses a blocked tensor's tag for its rank, which needs
// no dims: Compile checks an output whose dims are unknown with it.
func blockedLayout(t graph.LogicalTensor) (layout.Layout, error) {
	l, err := layout.Parse(t.Tag, len(t.Dims))
	if err != nil {
		return layout.Layout{}, status.Errorf(statusOf(err), "tensor %d: %s", t.ID, msgOf(err))
	}
	if l.Any {
		return layout.Layout{}, status.Errorf(status.InvalidArguments, "tensor %d: layout blocked with tag any; use graph.LayoutAny", t.ID)
	}
	return l, nil
}

// blockedDesc returns where a blocked tensor's elements live, checking
// its tag against its dims.
func blockedDesc(t graph.LogicalTensor) (layout.Desc, error) {
	l, err := blockedLayout(t)
	if err != nil {
		return layout.Desc{}, err
	}
	d, err := l.Desc(t.Dims)
	if err != nil {
		return layout.Desc{}, status.Errorf(statusOf(err), "tensor %d: %s", t.ID, msgOf(err))
	}
	return d, nil
}

// descOf describes a settled tensor's memory, blocked or strided.
func descOf(t graph.LogicalTensor) (layout.Desc, error) {
	if t.Layout == graph.LayoutBlocked {
		return blockedDesc(t)
	}
	return layout.Strided(t.Dims, t.Strides), nil
}

// blockedKernel compiles p (logical dims, reduce flags, post-ops with
// plain operand strides) for a src or output in a blocked layout. outDim
// maps src dims to output dims (-1 where keep_dims dropped one).
func blockedKernel(p *plan.Problem, src, out graph.LogicalTensor, outDim []int) (kernel, error) {
	sd, err := descOf(src)
	if err != nil {
		return kernel{}, err
	}
	od, err := descOf(out)
	if err != nil {
		return kernel{}, err
	}
	rank := len(p.Dims)
	dd := layout.Desc{Dims: make([]int64, rank), Block: make([]int64, rank), Outer: make([]int64, rank), Inner: make([]int64, rank)}
	for i, j := range outDim {
		if j < 0 {
			dd.Dims[i], dd.Block[i] = 1, 1
			continue
		}
		dd.Dims[i], dd.Block[i], dd.Outer[i], dd.Inner[i] = od.Dims[j], od.Block[j], od.Outer[j], od.Inner[j]
	}
	k, err := blocked.Compile(p, sd, dd)
	if err != nil {
		return kernel{}, err
	}
	return kernel{b: k}, nil
}

// statusOf and msgOf take an error of package layout apart, so that the
// message can name the tensor and keep the status.
func statusOf(err error) status.Status {
	var e *status.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return status.InvalidArguments
}

func msgOf(err error) string {
	var e *status.Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return err.Error()
}
