// Helpers for the C++ tests: tensors from values and back, queuing every op.
#pragma once

#include <cstring>
#include <vector>

#include "oneflow/core/eager/engine.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow::test {

inline Tensor from_vector(const std::vector<float>& v, const Shape& shape) {
  Tensor t = empty_tensor(shape, DType::kFloat32, Device{});
  std::memcpy(t->data(), v.data(), v.size() * sizeof(float));
  return t;
}

template <typename T = float>
std::vector<T> to_vector(const Tensor& t) {
  // Reads through strides so views can be checked too.
  std::vector<T> out;
  const int64_t n = t->numel(), nd = t->ndim();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, rem = i;
    for (int64_t d = nd - 1; d >= 0; --d) {
      off += (rem % t->shape()[d]) * t->strides()[d];
      rem /= t->shape()[d];
    }
    out.push_back(t->data_as<T>()[off]);
  }
  return out;
}

// Queues every op while alive (small ops on an idle stream would otherwise run at the call).
class QueueEveryOp {
 public:
  QueueEveryOp() : prev_(eager::queue_every_op()) { eager::set_queue_every_op(true); }
  ~QueueEveryOp() { eager::set_queue_every_op(prev_); }
  QueueEveryOp(const QueueEveryOp&) = delete;
  QueueEveryOp& operator=(const QueueEveryOp&) = delete;

 private:
  const bool prev_;
};

}  // namespace oneflow::test
