#include "oneflow/core/framework/tensor.h"

#include <algorithm>

namespace oneflow {

namespace {
thread_local bool t_inference_mode = false;
}  // namespace

void throw_meta_data_access() {
  throw_error<NotImplementedError>("data",
                                   "a tensor on the meta device has no data to read or "
                                   "write; make it on a real device (Module.to_empty, "
                                   "Tensor.to) first");
}

bool inference_mode_enabled() { return t_inference_mode; }
void set_inference_mode(bool enabled) { t_inference_mode = enabled; }

Storage::Storage(Device device, size_t nbytes) : device_(device), nbytes_(nbytes) {
  data_ = backend_of(device.type).allocator(device.index).allocate(nbytes);
}

Storage::Storage(Device device, void* data, size_t nbytes, std::function<void()> release)
    : device_(device), data_(data), nbytes_(nbytes), release_(std::move(release)) {
  shared_outside_.store(true, std::memory_order_relaxed);
}

Storage::Storage(Storage& dead) : device_(dead.device_), data_(dead.data_), nbytes_(dead.nbytes_) {
  last_use_.store(dead.last_use_.load(std::memory_order_acquire), std::memory_order_release);
  last_write_.store(dead.last_write_.load(std::memory_order_acquire), std::memory_order_release);
  dead.handed_on_ = true;
}

Storage::~Storage() {
  if (release_) {
    release_();
  } else if (data_ && !handed_on_) {
    backend_of(device_.type).allocator(device_.index).deallocate(data_, nbytes_);
  }
}

TensorImpl::TensorImpl(TensorMeta meta, std::shared_ptr<Storage> storage,
                       std::shared_ptr<VersionCounter> version)
    : meta_(std::move(meta)), storage_(std::move(storage)), version_(std::move(version)) {}

Tensor empty_tensor(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape)
    if (d < 0)
      throw_error<ValueError>("empty", "expected a shape with non-negative sizes, got ",
                              shape_str(shape));
  // The byte count must not wrap around: a wrapped count would allocate a small buffer that the
  // kernels then write past.
  int64_t nbytes = itemsize(dtype);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(nbytes, d, &nbytes))
      throw_error<RuntimeError>("empty", "storage size calculation overflowed with sizes ",
                                shape_str(shape));
  TensorMeta meta{shape, contiguous_strides(shape), 0, dtype, device};
  auto storage = std::make_shared<Storage>(device, static_cast<size_t>(nbytes));
  return std::make_shared<TensorImpl>(std::move(meta), std::move(storage),
                                      std::make_shared<VersionCounter>());
}

Tensor empty_strided_tensor(const Shape& shape, const Strides& strides, DType dtype,
                            Device device) {
  Tensor t = empty_tensor(shape, dtype, device);  // dense: the same bytes in any order
  TensorMeta meta = t->meta();
  meta.strides = strides;
  return std::make_shared<TensorImpl>(std::move(meta), t->storage(), t->version_counter());
}

Strides elementwise_strides(const std::vector<std::shared_ptr<TensorImpl>>& inputs,
                            const Shape& shape) {
  bool contiguous = true;
  for (const Tensor& t : inputs) contiguous = contiguous && t->is_contiguous();
  const size_t nd = shape.size();
  if (contiguous || nd < 2 || numel(shape) == 0) return {};
  // Each input's strides broadcast to `shape` (0 along broadcast dims).
  std::vector<Strides> st;
  for (const Tensor& t : inputs) {
    if (t->ndim() > static_cast<int64_t>(nd)) continue;
    const size_t lead = nd - t->ndim();
    Strides s(nd, 0);
    for (size_t i = 0; i < static_cast<size_t>(t->ndim()); ++i)
      s[lead + i] = t->shape()[i] == shape[lead + i] ? t->strides()[i] : 0;
    st.push_back(std::move(s));
  }
  // PyTorch's rule: dims ordered innermost first by insertion sort, each comparison decided by
  // the first input whose strides along both dims are nonzero and differ (equal strides: the
  // longer dim goes outside).
  auto outer_first = [&](size_t d0, size_t d1) {  // 1: d0 belongs outside d1; -1: inside
    for (const Strides& s : st) {
      if (s[d0] == 0 || s[d1] == 0) continue;
      if (s[d0] < s[d1]) return -1;
      if (s[d0] > s[d1]) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  std::vector<size_t> perm(nd);  // perm[0] innermost
  for (size_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  for (size_t i = 1; i < nd; ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      const int c = outer_first(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Strides out(nd);
  int64_t acc = 1;
  for (size_t d : perm) {
    out[d] = acc;
    acc *= shape[d];
  }
  if (is_contiguous(shape, out)) return {};
  return out;
}

Tensor make_view(const Tensor& base, const Shape& shape, const Strides& strides, int64_t offset) {
  return make_view(base, shape, strides, offset, base->dtype());
}

Tensor make_view(const Tensor& base, const Shape& shape, const Strides& strides, int64_t offset,
                 DType dtype) {
  TensorMeta meta{shape, strides, offset, dtype, base->device()};
  auto t = std::make_shared<TensorImpl>(std::move(meta), base->storage(), base->version_counter());
  t->set_is_view(true);
  t->set_view_base(base->is_view() && base->view_base() ? base->view_base() : base);
  return t;
}

Tensor alias_detached(const Tensor& t) {
  auto a = std::make_shared<TensorImpl>(t->meta(), t->storage(), t->version_counter());
  if (t->global()) a->set_global(t->global());  // the shard carries no autograd state
  return a;
}

}  // namespace oneflow
