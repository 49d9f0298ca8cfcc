// One-pass kernels for nn functions that were compositions of many dispatches: grid_sample (4-D
// and 5-D inputs, (bi/tri)linear or nearest taps), pdist, the CTC loss and embedding_bag's
// segment maximum. Each has a forward
// primitive and a gradient primitive (not differentiable again, as in PyTorch). CPU kernels in
// kernels/cpu/sampling.cpp; elsewhere (and for bicubic taps and 16-bit floats) the
// Python layer keeps its composition of other primitives, which runs on every device.
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// Sampling modes and padding rules of grid_sample, as the attrs "mode" and "padding" hold them.
enum class GridMode : int64_t { kBilinear = 0, kNearest = 1 };
enum class GridPadding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// input (N, C, H, W) and grid (N, H', W', 2), or input (N, C, D, H, W) and grid
// (N, D', H', W', 3), both contiguous, float32 or float64 -> (N, C, H', W') / (N, C, D', H', W'):
// the input read at the grid's normalised (x, y[, z]) positions. Attrs mode, padding,
// align_corners.
class GridSample final : public Primitive {
 public:
  const char* name() const override { return "grid_sample"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (dy, input, grid) -> (d input, d grid), the attrs of the forward plus need_input /
// need_grid (which of the two to compute; the other comes back zero-filled).
class GridSampleGrad final : public Primitive {
 public:
  const char* name() const override { return "grid_sample_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// x (N, M) contiguous float32 / float64 -> (N (N - 1) / 2,): the p-norm distance of each pair of
// rows i < j, in row-major order of (i, j). Attr p (>= 0, inf allowed).
class Pdist final : public Primitive {
 public:
  const char* name() const override { return "pdist"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (dy, x, distances) -> dx. Attr p.
class PdistGrad final : public Primitive {
 public:
  const char* name() const override { return "pdist_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// The CTC negative log likelihood of each sequence: log_probs (T, N, C) contiguous float32 /
// float64, targets int64 (N, S) padded or (sum of target lengths,) concatenated, input and target
// lengths int64 (N,) -> (nll (N,), log_alpha (N, T, 2 S_max + 1)), the forward variables the
// gradient reuses. Attr blank. A target outside [0, C) raises.
class CtcLoss final : public Primitive {
 public:
  const char* name() const override { return "ctc_loss"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (d nll (N,), log_probs, targets, input_lengths, target_lengths, nll, log_alpha) -> d log_probs,
// from the backward variables. Attrs blank, zero_infinity (an infinite loss gets zero gradient).
class CtcLossGrad final : public Primitive {
 public:
  const char* name() const override { return "ctc_loss_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// The maximum of each segment of rows: values (K, D) contiguous float32/float64 and segment ids
// (K,) int64, non-decreasing, in [0, attr segments) -> (max (segments, D), argmax (segments, D)
// int64: the row of the first maximum, -1 for an empty segment, whose max is 0). With a third
// input, int64 row numbers (K,) into values (N, D), the k-th row is values[rows[k]] and argmax
// holds those row numbers: embedding_bag's max mode reads the weight itself, and its gradient
// lands in the weight's shape (no gathered copy and no scatter back). The gradient puts dy at
// the argmax rows (SegmentMaxGrad).
class SegmentMax final : public Primitive {
 public:
  const char* name() const override { return "segment_max"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (dy (segments, D), argmax (segments, D)) -> d values (attr rows, D).
class SegmentMaxGrad final : public Primitive {
 public:
  const char* name() const override { return "segment_max_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const GridSample& grid_sample();
const GridSampleGrad& grid_sample_grad();
const Pdist& pdist();
const PdistGrad& pdist_grad();
const CtcLoss& ctc_loss();
const CtcLossGrad& ctc_loss_grad();
const SegmentMax& segment_max();
const SegmentMaxGrad& segment_max_grad();
}  // namespace prim

}  // namespace oneflow
