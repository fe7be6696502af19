package normprog

import (
	"math"
	"slices"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/chunk"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// GroupNorm on channels-last data (NHWC): each pixel holds every
// group's channels side by side, so a group is not a run of memory and
// the passes over split dims would sweep it a few channels at a time,
// an image per chunk. Instead the tensor is seen as [images, pixels,
// channels] and cut into blocks of pixels of about blockBytes, each
// swept by column kernels whose vectors run along the channels, the
// per-channel results summed per group in Go:
//
//	statistics of a block (its src stays in the core's cache):
//	  per channel the sum of x and of x^2 over the block's pixels (f32), per
//	  group a mean m and a variance E[x^2] - m^2, kept where m^2 is at
//	  most half of E[x^2] (so at most one bit cancels); else, for data
//	  far from 0 against their spread, the deviations d = x - M from m
//	  rounded to f32 (M), and per group m = M + E[d], variance
//	  E[d^2] - E[d]^2, where E[d] is small: nothing cancels
//	per image, in float64 and in block order: the blocks' means and sums
//	  of squared deviations merged (Chan et al.); then per channel c of
//	  group g the mean as two f32s hi + lo, a_c = gamma_c / sqrt(var_g +
//	  eps), beta_c
//	map of a block: y = ((x - hi_c) - lo_c) * a_c + beta_c [post-ops]
//	  (one copy kernel, four per-channel operands)
//
// x is read from memory once for the statistics and once for the map, or
// once in all where the images of a round (roundBytes) stay in the L3
// between the two. Blocks and rounds depend on the description alone, a
// block's sweeps on its data alone, and the merges run in a fixed order,
// so results are the same for every thread count. Blocks are disjoint
// runs of src, so a run in place copies each block to scratch before
// its map, and no copy of the whole input is made.

// blockBytes is about how much src one block holds: with its f32
// deviations, where it needs them, it stays in a core's L2. Fewer, larger
// blocks call fewer kernels.
const blockBytes = chunkBytes

// roundBytes is about how much src a round of images holds: its
// statistics and its map run one after the other while it stays in
// the L3.
const roundBytes = 8 << 20

// chanLast is a GroupNorm compiled for channels-last data.
type chanLast struct {
	imgs, pixels, chans, groups int64
	srcB, srcP                  int64 // src strides of an image and a pixel (a channel's is 1)
	dstB, dstP, dstC            int64
	gamma, beta                 *chanOperand
	mean, vr                    *statOperand
	bins                        []binOperand // the caller's binary post-ops
	block                       int64        // pixels per block
	blocks                      int64        // blocks per image
	round                       int64        // images per round
	full, last                  *chanKernels // a block's, the image's last shorter block's (nil: none)
	scratch                     chunk.Stash[chanScratch]
	runs                        chunk.Stash[chanRun]
}

// chanKernels are one block size's kernels.
type chanKernels struct {
	pixels                                  int64
	sum, sumSq, dev, devSum, devSumSq, mapK *jit.Kernel
}

// chanOperand is gamma or beta: per channel, stride ch.
type chanOperand struct {
	dt dtypes.DataType
	ch int64
}

// statOperand is a kept mean or variance: per image and group.
type statOperand struct{ img, group int64 }

// binOperand is a binary post-op's operand over [images, pixels, channels].
type binOperand struct {
	dt           dtypes.DataType
	img, px, chn int64
}

// chanScratch is a worker's scratch: a block's squared deviations, two
// per-channel rows, and the block's copy for a run in place.
type chanScratch struct{ y, row, mid, cp []byte }

// chanRun is a Run's statistics for a round: per image, block and
// group the mean and the sum of squared deviations, then per image the
// map's per-channel operands as f32 (hi, lo, a, beta).
type chanRun struct {
	stats []float64
	coefs []byte
}

// merged returns the size and innermost stride of dims idx (outermost
// first) walked as one dim by strides s, or ok false where they are not.
func merged(dims []int64, idx []int, s []int64) (n, stride int64, ok bool) {
	n = 1
	prev := -1
	for _, i := range idx {
		if dims[i] == 1 {
			continue
		}
		if prev >= 0 && s[prev] != dims[i]*s[i] {
			return 0, 0, false
		}
		n, stride, prev = n*dims[i], s[i], i
	}
	return n, stride, true
}

// compileChanLast compiles GroupNorm d (as given, not split) for
// channels-last data, or returns nil where d is not such (then the
// passes run).
func compileChanLast(d *Desc) (*chanLast, error) {
	k := d.ChanDim
	if !useFused || d.Kind != GroupNorm || d.Dequant != nil || d.Residual != nil || slices.Contains(d.Dims, 0) ||
		d.SrcStrides[k] != 1 {
		return nil, nil
	}
	var batch, pix []int
	for i := range d.Dims {
		switch {
		case d.Norm[i]:
			pix = append(pix, i)
		case i != k:
			batch = append(batch, i)
		}
	}
	view := func(s []int64) (img, px int64, ok bool) {
		_, img, ok1 := merged(d.Dims, batch, s)
		_, px, ok2 := merged(d.Dims, pix, s)
		return img, px, ok1 && ok2
	}
	cl := &chanLast{chans: d.Dims[k], groups: d.Groups}
	cl.imgs, _, _ = merged(d.Dims, batch, d.SrcStrides)
	cl.pixels, _, _ = merged(d.Dims, pix, d.SrcStrides)
	var ok bool
	if cl.srcB, cl.srcP, ok = view(d.SrcStrides); !ok {
		return nil, nil
	}
	// Pixels and images one after another, never interleaved: blocks are
	// then disjoint runs of src (see In place).
	if cl.pixels > 1 && cl.srcP < cl.chans || cl.imgs > 1 && cl.srcB < cl.pixels*max(cl.srcP, cl.chans) {
		return nil, nil
	}
	if cl.dstB, cl.dstP, ok = view(d.DstStrides); !ok {
		return nil, nil
	}
	cl.dstC = d.DstStrides[k]
	for _, o := range []struct {
		from *Operand
		to   **chanOperand
	}{{d.Gamma, &cl.gamma}, {d.Beta, &cl.beta}} {
		if o.from == nil {
			continue
		}
		for i, s := range o.from.Strides {
			if i != k && s != 0 && d.Dims[i] > 1 {
				return nil, nil // gamma or beta varies beyond the channels
			}
		}
		*o.to = &chanOperand{dt: o.from.DT, ch: o.from.Strides[k]}
	}
	// Kept statistics are over the split dims: the groups at k, the
	// channels of a group at k+1 (stride 0), the others shifted past them.
	splitIdx := func(i int) int {
		if i > k {
			return i + 1
		}
		return i
	}
	for _, o := range []struct {
		from *Operand
		to   **statOperand
	}{{d.Mean, &cl.mean}, {d.Var, &cl.vr}} {
		if o.from == nil {
			continue
		}
		s := make([]int64, len(d.Dims))
		for i := range s {
			s[i] = o.from.Strides[splitIdx(i)]
		}
		img, _, ok := view(s)
		if !ok {
			return nil, nil
		}
		*o.to = &statOperand{img: img, group: o.from.Strides[k]}
	}
	post := []plan.PostOp{
		{Kind: ops.Subtract, BinDT: dtypes.F32, BinStrides: []int64{0, 1}},
		{Kind: ops.Subtract, BinDT: dtypes.F32, BinStrides: []int64{0, 1}},
		{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{0, 1}},
		{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{0, 1}},
	}
	for _, op := range d.PostOps {
		if op.Kind.IsBinary() {
			img, px, ok := view(op.BinStrides)
			if !ok {
				return nil, nil
			}
			cl.bins = append(cl.bins, binOperand{dt: op.BinDT, img: img, px: px, chn: op.BinStrides[k]})
			op.BinStrides = []int64{px, op.BinStrides[k]}
		}
		post = append(post, op)
	}
	if binaries(post) > plan.MaxBinary {
		return nil, nil
	}
	size := int64(d.SrcDT.Size())
	cl.block = min(cl.pixels, max(1, blockBytes/(cl.chans*max(size, 4))))
	cl.blocks = (cl.pixels + cl.block - 1) / cl.block
	cl.round = max(1, roundBytes/max(1, cl.pixels*cl.chans*size))
	var err error
	if cl.full, err = cl.kernels(d, cl.block, post); err != nil {
		return nil, err
	}
	if rem := cl.pixels % cl.block; rem > 0 {
		if cl.last, err = cl.kernels(d, rem, post); err != nil {
			return nil, err
		}
	}
	return cl, nil
}

// kernels compiles the kernels of a block of px pixels.
func (cl *chanLast) kernels(d *Desc, px int64, post []plan.PostOp) (*chanKernels, error) {
	c := cl.chans
	dims := []int64{px, c}
	cols := []bool{true, false}
	none := []bool{false, false}
	row := []int64{0, 1}
	compile := func(pr *plan.Problem) (*jit.Kernel, error) {
		pl, err := plan.Canonicalize(pr)
		if err != nil {
			return nil, err
		}
		return jit.Compile(pl)
	}
	ks := &chanKernels{pixels: px}
	var err error
	src := []int64{cl.srcP, 1}
	// Sums, not means: the division by the block's pixels, which f32
	// would round, is taken in float64 (blockStats).
	sum := plan.AlgSum.Reduction(0, 0)
	if ks.sum, err = compile(&plan.Problem{Reduction: sum, SrcDT: d.SrcDT, DstDT: dtypes.F32, Dims: dims,
		SrcStrides: src, Reduce: cols, DstStrides: row}); err != nil {
		return nil, err
	}
	sumSq := sum
	sumSq.Transform = plan.TransformSquare
	if ks.sumSq, err = compile(&plan.Problem{Reduction: sumSq, SrcDT: d.SrcDT, DstDT: dtypes.F32, Dims: dims,
		SrcStrides: src, Reduce: cols, DstStrides: row}); err != nil {
		return nil, err
	}
	if ks.dev, err = compile(&plan.Problem{Reduction: plan.Copy, SrcDT: d.SrcDT, DstDT: dtypes.F32, Dims: dims,
		SrcStrides: src, Reduce: none, DstStrides: []int64{c, 1},
		PostOps: []plan.PostOp{{Kind: ops.Subtract, BinDT: dtypes.F32, BinStrides: row}}}); err != nil {
		return nil, err
	}
	dev := []int64{c, 1}
	if ks.devSum, err = compile(&plan.Problem{Reduction: sum, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: dims,
		SrcStrides: dev, Reduce: cols, DstStrides: row}); err != nil {
		return nil, err
	}
	if ks.devSumSq, err = compile(&plan.Problem{Reduction: sumSq, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: dims,
		SrcStrides: dev, Reduce: cols, DstStrides: row}); err != nil {
		return nil, err
	}
	if ks.mapK, err = compile(&plan.Problem{Reduction: plan.Copy, SrcDT: d.SrcDT, DstDT: d.DstDT, Dims: dims,
		SrcStrides: src, Reduce: none, DstStrides: []int64{cl.dstP, cl.dstC}, PostOps: post}); err != nil {
		return nil, err
	}
	return ks, nil
}

// kernelsOf returns the kernels of block blk.
func (cl *chanLast) kernelsOf(blk int64) *chanKernels {
	if cl.last != nil && blk == cl.blocks-1 {
		return cl.last
	}
	return cl.full
}

// run normalizes b.Src into b.Dst with epsilon eps and the binary
// operands bins; b is checked.
func (cl *chanLast) run(b *Buffers, bins [][]byte, srcDT, dstDT dtypes.DataType, eps float32) error {
	r := cl.runs.Get()
	defer cl.runs.Put(r)
	c, g := cl.chans, cl.groups
	r.stats = slices.Grow(r.stats[:0], int(cl.round*cl.blocks*g*2))[:cl.round*cl.blocks*g*2]
	r.coefs = slices.Grow(r.coefs[:0], int(cl.round*4*c*4))[:cl.round*4*c*4]
	local := chanPass{cl: cl, b: *b, r: r, srcDT: srcDT, dstDT: dstDT,
		inPlace: len(b.Src) > 0 && len(b.Dst) > 0 && unsafe.SliceData(b.Src) == unsafe.SliceData(b.Dst)}
	threads := jit.Threads()
	// A round that threads share runs shared's sweeps, made at the first
	// such round: the workers' closures go to the heap, and with them
	// what they refer to, copies of local and of bins (see Program.run).
	// A round on one thread runs local's, on the stack.
	var shared *chanPass
	var sharedStats, sharedMap func(s *chanScratch, i int64) error
	for first := int64(0); first < cl.imgs; first += cl.round {
		n := min(cl.round, cl.imgs-first)
		cut := chunk.Cut{Dim: 0, Size: 1, N: n * cl.blocks}
		local.first = first
		if cut.Threads(threads) == 1 {
			if err := chunk.Serial(cut, &cl.scratch, local.stats); err != nil {
				return err
			}
			local.merge(n, eps)
			if err := chunk.Serial(cut, &cl.scratch, func(s *chanScratch, i int64) error { return local.mapBlock(s, i, bins) }); err != nil {
				return err
			}
			continue
		}
		if shared == nil {
			sh, shBins := new(chanPass), slices.Clone(bins)
			shared, sharedStats = sh, sh.stats
			sharedMap = func(s *chanScratch, i int64) error { return sh.mapBlock(s, i, shBins) }
		}
		*shared = local
		if err := chunk.Run(cut, threads, &cl.scratch, sharedStats); err != nil {
			return err
		}
		shared.merge(n, eps)
		if err := chunk.Run(cut, threads, &cl.scratch, sharedMap); err != nil {
			return err
		}
	}
	return nil
}

// chanPass is what a round's chunks read: the run's checked buffers
// (without the binary operands, which travel apart: see Program.run),
// the round's first image and the run's statistics. Chunk i of a round
// is block i%blocks of image first+i/blocks.
type chanPass struct {
	cl           *chanLast
	b            Buffers
	r            *chanRun
	first        int64
	srcDT, dstDT dtypes.DataType
	inPlace      bool
}

// stats writes chunk i's statistics.
func (st *chanPass) stats(s *chanScratch, i int64) error {
	cl, g := st.cl, st.cl.groups
	return cl.blockStats(s, st.b.Src, st.srcDT, st.first+i/cl.blocks, i%cl.blocks, st.r.stats[i*g*2:(i+1)*g*2])
}

// merge merges the statistics of the round's n images.
func (st *chanPass) merge(n int64, eps float32) {
	cl := st.cl
	c, g := cl.chans, cl.groups
	for i := range n {
		cl.merge(st.r.stats[i*cl.blocks*g*2:(i+1)*cl.blocks*g*2], st.r.coefs[i*4*c*4:(i+1)*4*c*4], &st.b, st.first+i, eps)
	}
}

// mapBlock maps chunk i into dst, with bins the binary operands.
func (st *chanPass) mapBlock(s *chanScratch, i int64, bins [][]byte) error {
	cl, c := st.cl, st.cl.chans
	img := i / cl.blocks
	return cl.mapBlock(s, &st.b, bins, st.srcDT, st.dstDT, st.first+img, i%cl.blocks, st.r.coefs[img*4*c*4:(img+1)*4*c*4], st.inPlace)
}

// blockStats writes block blk of image img's statistics to out: per
// group its mean and its sum of squared deviations.
func (cl *chanLast) blockStats(s *chanScratch, src []byte, dt dtypes.DataType, img, blk int64, out []float64) error {
	ks := cl.kernelsOf(blk)
	c, per := cl.chans, cl.chans/cl.groups
	s.row, s.mid = sized(s.row, c*4), sized(s.mid, c*4)
	x := src[(img*cl.srcB+blk*cl.block*cl.srcP)*int64(dt.Size()):]
	if err := ks.sum.RunInline(x, s.row, nil); err != nil {
		return err
	}
	if err := ks.sumSq.RunInline(x, s.mid, nil); err != nil {
		return err
	}
	n := float64(ks.pixels * per)
	// groupMean is the mean over group gi's channels of row's per-channel
	// sums over the block's pixels: divided in float64, so that data
	// whose sums f32 holds exactly (oneDNN's test data) give their mean
	// exactly, and x at the mean maps to beta itself.
	groupMean := func(row []byte, gi int64) float64 {
		sum := 0.0
		for ch := gi * per; ch < (gi+1)*per; ch++ {
			sum += float64(dtypes.LoadF32(dtypes.F32, row, ch))
		}
		return sum / n
	}
	means, m2s := out[:cl.groups], out[cl.groups:]
	exact := true
	for gi := range cl.groups {
		m, sq := groupMean(s.row, gi), groupMean(s.mid, gi)
		means[gi], m2s[gi] = m, (sq-m*m)*n
		// The mean of squares less the square of the mean keeps f32
		// accuracy where the square of the mean is at most half the mean
		// of squares (at most one bit cancels), not where the data sit
		// far from 0 compared with their spread.
		// An infinite or NaN mean stays as it is: the deviations from it
		// would be NaN (Inf - Inf), and say no more.
		exact = exact && (sq-m*m >= sq/2 || math.IsInf(m, 0) || math.IsNaN(m))
	}
	if exact {
		return nil
	}
	// Data far from 0: the deviations from M_g, each group's mean rounded
	// to f32, give the mean's remainder and the squared deviations
	// exactly (see chanLast).
	for gi := range cl.groups {
		m := float32(means[gi])
		for ch := gi * per; ch < (gi+1)*per; ch++ {
			dtypes.StoreF32(dtypes.F32, s.mid, ch, m)
		}
	}
	s.y = sized(s.y, ks.pixels*c*4)
	if err := ks.dev.RunInline(x, s.y, [][]byte{s.mid}); err != nil {
		return err
	}
	if err := ks.devSum.RunInline(s.y, s.row, nil); err != nil {
		return err
	}
	for gi := range cl.groups {
		dm := groupMean(s.row, gi)
		means[gi] = float64(dtypes.LoadF32(dtypes.F32, s.mid, gi*per)) + dm
		m2s[gi] = -n * dm * dm
	}
	if err := ks.devSumSq.RunInline(s.y, s.row, nil); err != nil {
		return err
	}
	for gi := range cl.groups {
		m2s[gi] = max(0, m2s[gi]+n*groupMean(s.row, gi))
	}
	return nil
}

// merge merges image img's blocks' statistics (stats) into its mean and
// variance per group, writes the kept ones, and the map's per-channel
// operands into coefs.
func (cl *chanLast) merge(stats []float64, coefs []byte, b *Buffers, img int64, eps float32) {
	c, g, per := cl.chans, cl.groups, cl.chans/cl.groups
	for gi := range g {
		var n, mean, m2 float64
		for blk := range cl.blocks {
			nb := float64(cl.kernelsOf(blk).pixels * per)
			bm, bm2 := stats[blk*g*2+gi], stats[blk*g*2+g+gi]
			delta := bm - mean
			total := n + nb
			mean += delta * nb / total
			m2 += bm2 + delta*delta*n*nb/total
			n = total
		}
		vr := m2 / n
		if cl.mean != nil {
			dtypes.StoreF32(dtypes.F32, b.Mean, img*cl.mean.img+gi*cl.mean.group, float32(mean))
		}
		if cl.vr != nil {
			dtypes.StoreF32(dtypes.F32, b.Var, img*cl.vr.img+gi*cl.vr.group, float32(vr))
		}
		rstd := 1 / math.Sqrt(vr+float64(eps))
		// The mean as two f32s: x - hi - lo loses none of it where the
		// data sit far from 0.
		hi := float32(mean)
		lo := float32(mean - float64(hi))
		for ch := gi * per; ch < (gi+1)*per; ch++ {
			a, beta := rstd, 0.0
			if o := cl.gamma; o != nil {
				a *= float64(dtypes.LoadF32(o.dt, b.Gamma, ch*o.ch))
			}
			if o := cl.beta; o != nil {
				beta = float64(dtypes.LoadF32(o.dt, b.Beta, ch*o.ch))
			}
			dtypes.StoreF32(dtypes.F32, coefs, ch, hi)
			dtypes.StoreF32(dtypes.F32, coefs, c+ch, lo)
			dtypes.StoreF32(dtypes.F32, coefs, 2*c+ch, float32(a))
			dtypes.StoreF32(dtypes.F32, coefs, 3*c+ch, float32(beta))
		}
	}
}

// mapBlock maps block blk of image img into dst with the image's coefs
// and bins the binary operands (b.Bins is not read).
func (cl *chanLast) mapBlock(s *chanScratch, b *Buffers, bins [][]byte, srcDT, dstDT dtypes.DataType, img, blk int64, coefs []byte, inPlace bool) error {
	ks := cl.kernelsOf(blk)
	c := cl.chans
	first := blk * cl.block
	size := int64(srcDT.Size())
	x := b.Src[(img*cl.srcB+first*cl.srcP)*size:]
	if inPlace {
		// The copy kernel may store over src it reads again (see In place).
		n := ((ks.pixels-1)*cl.srcP + c) * size
		s.cp = sized(s.cp, n)
		copy(s.cp, x[:n])
		x = s.cp
	}
	var held [plan.MaxBinary][]byte
	opnds := append(held[:0], coefs[:c*4], coefs[c*4:2*c*4], coefs[2*c*4:3*c*4], coefs[3*c*4:])
	for i, o := range cl.bins {
		opnds = append(opnds, bins[i][(img*o.img+first*o.px)*int64(o.dt.Size()):])
	}
	return ks.mapK.RunInline(x, b.Dst[(img*cl.dstB+first*cl.dstP)*int64(dstDT.Size()):], opnds)
}

// copyBytes is how much src a run in place copies: every block's span.
func (cl *chanLast) copyBytes(size int64) int64 {
	n := int64(0)
	for blk := range cl.blocks {
		n += ((cl.kernelsOf(blk).pixels-1)*cl.srcP + cl.chans) * size
	}
	return n * cl.imgs
}

// sized returns buf with length n, reallocated where it is shorter.
func sized(buf []byte, n int64) []byte {
	if int64(cap(buf)) < n {
		return make([]byte, n)
	}
	return buf[:n]
}

// impl names the kernels' implementations, joined by "+".
func (cl *chanLast) impl() string {
	var names []string
	for _, k := range []*jit.Kernel{cl.full.sum, cl.full.sumSq, cl.full.dev, cl.full.devSum, cl.full.devSumSq, cl.full.mapK} {
		if n := k.Impl(); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return joinNames(names)
}

// why says why the interpreter runs some kernel, or "".
func (cl *chanLast) why() string {
	for _, k := range []*jit.Kernel{cl.full.sum, cl.full.sumSq, cl.full.dev, cl.full.devSum, cl.full.devSumSq, cl.full.mapK} {
		if w := k.Why(); w != "" {
			return w
		}
	}
	return ""
}
