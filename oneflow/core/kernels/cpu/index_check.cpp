// The CPU kernel of CheckIndexRange (ops/index_check_primitive.h).
#include <vector>

#include "oneflow/core/ops/index_check_primitive.h"

namespace oneflow {

namespace {
template <typename T>
void check(const Tensor& index, const Attrs& attrs) {
  const int64_t lo = attrs.get<int64_t>("lo"), hi = attrs.get<int64_t>("hi");
  const T* p = index->read_as<T>();
  const Shape& shape = index->shape();
  const Strides& strides = index->strides();
  const int64_t n = index->numel();
  // Walks the (possibly strided) index in row-major order.
  std::vector<int64_t> pos(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = static_cast<int64_t>(p[offset]);
    if (v < lo || v >= hi)
      throw_error<IndexError>(attrs.get<std::string>("op").c_str(), "index ", v,
                              " is out of bounds for dimension ", attrs.get<int64_t>("dim"),
                              " with size ", attrs.get<int64_t>("size"));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      offset += strides[d];
      if (++pos[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      pos[d] = 0;
    }
  }
}
}  // namespace

void CheckIndexRange::compute_cpu(const TensorList& in, const TensorList&,
                                  const Attrs& attrs) const {
  if (in[0]->dtype() == DType::kInt64)
    check<int64_t>(in[0], attrs);
  else
    check<int32_t>(in[0], attrs);
}

void CheckIndexRange::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

}  // namespace oneflow
