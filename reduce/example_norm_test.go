package reduce_test

import (
	"fmt"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/reduce"
)

// Attention weights: the softmax of one head's scores over the keys,
// with a causal mask (-Inf where a query may not see a key), which gives
// exactly 0 there.
func ExampleSoftmax_attention() {
	heads, queries, keys := 1, 3, 3
	scores := []float32{
		0.5, 0, 0,
		1, 1, 0,
		2, 0, 1,
	}
	for q := range queries {
		for k := q + 1; k < keys; k++ {
			scores[q*keys+k] = float32(math.Inf(-1))
		}
	}
	weights := make([]float32, len(scores))
	err := reduce.Softmax(weights, scores, []int{heads, queries, keys}, -1)
	for q := range queries {
		fmt.Printf("%.4f\n", weights[q*keys:(q+1)*keys])
	}
	fmt.Println(err)
	// Output:
	// [1.0000 0.0000 0.0000]
	// [0.5000 0.5000 0.0000]
	// [0.6652 0.0900 0.2447]
	// <nil>
}

// Attention's forward pass for training keeps each row's log-sum-exp
// beside the weights: the backward pass recomputes the weights from the
// scores as exp(score - lse), without a second max and sum.
func ExampleSoftmaxStats() {
	scores := []float32{
		1, 2, 3,
		0, 0, float32(math.Inf(-1)),
	}
	weights := make([]float32, len(scores))
	lse := make([]float32, 2)
	err := reduce.Softmax(weights, scores, []int{2, 3}, -1, reduce.SoftmaxStats(lse))
	fmt.Printf("%.4f %.4f\n", weights, lse)
	fmt.Printf("%.4f\n", math.Exp(float64(scores[0]-lse[0])))
	fmt.Println(err)
	// Output:
	// [0.0900 0.2447 0.6652 0.5000 0.5000 0.0000] [3.4076 0.6931]
	// 0.0900
	// <nil>
}

// A transformer block's RMSNorm, as in Llama, on bf16 activations: the
// block's output plus the residual, normalized over the hidden dim and
// scaled by the learned weight, with eps 1e-6. The graph API fuses the
// residual Add into the normalization (package partition's
// Example_residualRMSNorm); here it is added first.
func ExampleRMSNorm_transformer() {
	seq, hidden := 2, 4
	out := []float32{1, -2, 2, -4, 0.5, 0.5, 0.5, 0.5}
	residual := []float32{0, 0, 1, 0, 0.5, -0.5, 0.5, -0.5}
	x := make([]BFloat16, seq*hidden)
	for i := range x {
		x[i] = BFloat16(dtypes.F32ToBF16(out[i] + residual[i]))
	}
	weight := make([]BFloat16, hidden)
	for i, w := range []float32{1, 1, 0.5, 2} {
		weight[i] = BFloat16(dtypes.F32ToBF16(w))
	}
	y := make([]BFloat16, len(x))
	err := reduce.RMSNorm(y, x, weight, []int{seq, hidden}, -1, 1e-6,
		reduce.Type(dtypes.BF16), reduce.ParamType(dtypes.BF16))
	for i := range seq {
		row := make([]float32, hidden)
		for j := range row {
			row[j] = dtypes.BF16ToF32(uint16(y[i*hidden+j]))
		}
		fmt.Println(row)
	}
	fmt.Println(err)
	// Output:
	// [0.36523438 -0.73046875 0.546875 -2.921875]
	// [1.4140625 0 0.70703125 0]
	// <nil>
}

// LayerNorm over the hidden dim of a [batch, seq, hidden] tensor, with a
// scale and a shift, and each row's mean and variance for a backward
// pass.
func ExampleLayerNorm() {
	batch, seq, hidden := 1, 2, 4
	x := []float32{
		1, 2, 3, 4,
		10, 10, 10, 14,
	}
	gamma := []float32{1, 1, 1, 1}
	beta := []float32{0, 0, 0, 1}
	y := make([]float32, len(x))
	mean, variance := make([]float32, batch*seq), make([]float32, batch*seq)
	err := reduce.LayerNorm(y, x, gamma, beta, []int{batch, seq, hidden}, -1, 0, reduce.Stats(mean, variance))
	fmt.Printf("%.4f\n%.4f\n", y[:hidden], y[hidden:])
	fmt.Println(mean, variance, err)
	// Output:
	// [-1.3416 -0.4472 0.4472 2.3416]
	// [-0.5774 -0.5774 -0.5774 2.7321]
	// [2.5 11] [1.25 3] <nil>
}

// GroupNorm of an NHWC feature map: 4 channels in 2 groups, each group
// normalized over its channels and every pixel; no scale or shift, so
// gamma and beta are nil (typed, so that their element type is known).
func ExampleGroupNorm_nhwc() {
	n, h, w, c := 1, 1, 2, 4
	x := []float32{
		1, 3, 10, 10,
		1, 3, 20, 40,
	}
	y := make([]float32, len(x))
	err := reduce.GroupNorm(y, x, []float32(nil), nil, []int{n, h, w, c}, 2, -1, 0)
	fmt.Printf("%.4f\n%.4f\n", y[:c], y[c:])
	fmt.Println(err)
	// Output:
	// [-1.0000 1.0000 -0.8165 -0.8165]
	// [-1.0000 1.0000 0.0000 1.6330]
	// <nil>
}

// Log-probabilities of a classifier's logits: log-softmax over the
// classes, x - max - log(sum exp(x - max)), so that large logits do not
// overflow.
func ExampleLogSoftmax() {
	logits := []float32{1000, 1000, 999}
	logp := make([]float32, len(logits))
	err := reduce.LogSoftmax(logp, logits, []int{1, 3}, 1)
	fmt.Printf("%.4f %v\n", logp, err)
	// Output: [-0.8620 -0.8620 -1.8620] <nil>
}

// Sentence embeddings as sentence-transformers makes them: the mean of
// each sentence's token embeddings over its real tokens only (the
// attention mask), then L2-normalized so that a dot product is the
// cosine similarity.
func ExampleMaskedMean_sentenceEmbedding() {
	batch, seq, hidden := 2, 3, 2
	tokens := []float32{
		1, 2, 3, 4, 100, 100, // sentence 0: two tokens, then padding
		3, 0, 0, 4, 3, 8,
	}
	mask := []uint8{
		1, 1, 0,
		1, 1, 1,
	}
	pooled := make([]float32, batch*hidden)
	err := reduce.MaskedMean(pooled, tokens, mask, []int{batch, seq, hidden}, 1)
	fmt.Println(pooled, err)
	emb := make([]float32, len(pooled))
	err = reduce.LpNormalize(emb, pooled, []int{batch, hidden}, -1, 2, 1e-12)
	fmt.Println(emb, err)
	// Output:
	// [2 3 2 4] <nil>
	// [0.5547002 0.8320503 0.4472136 0.8944272] <nil>
}

// An ONNX model's nodes run with ONNX's semantics: here a Softmax at
// opset 11, which coerces its input to 2-D at axis 1 (so each batch
// element's whole [2, 2] block is one row), and the same node at opset
// 13, which normalizes over the last axis only.
func ExampleRunONNXNorm() {
	x := []float32{0, 0, 0, 0, 1, 1, 1, 1}
	dims := []int{2, 2, 2}
	y := make([]float32, len(x))
	for _, opset := range []int{11, 13} {
		node, err := reduce.NewONNXNorm("Softmax", opset)
		if err == nil {
			err = reduce.RunONNXNorm(node, y, x, []float32(nil), nil, dims)
		}
		fmt.Println(opset, y, err)
	}
	// Output:
	// 11 [0.25 0.25 0.25 0.25 0.25 0.25 0.25 0.25] <nil>
	// 13 [0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5] <nil>
}

// L1 normalization of each row, and what eps does to a row of zeros:
// PyTorch's normalize (eps 1e-12) gives 0s, ONNX's LpNormalization (no
// eps) gives 0/0.
func ExampleLpNormalize() {
	x := []float32{1, 3, 0, 0}
	y := make([]float32, len(x))
	for _, eps := range []float32{1e-12, 0} {
		err := reduce.LpNormalize(y, x, []int{2, 2}, -1, 1, eps)
		fmt.Println(y, err)
	}
	// Output:
	// [0.25 0.75 0 0] <nil>
	// [0.25 0.75 NaN NaN] <nil>
}
