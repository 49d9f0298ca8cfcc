// Storage, TensorImpl and the Tensor handle.
//
// A Tensor is a shared handle to a TensorImpl. A local TensorImpl views a Storage through shape,
// strides (in elements) and a storage offset; views share the Storage and the version counter.
// A global tensor (DESIGN.md section 8) has the global shape in its meta and its placement,
// sbp and the shard this process holds in a GlobalMeta (framework/global.h); its own bytes are
// never read: kernels run on the shard (dispatch/global_dispatch.cpp). Lazy tensors have their
// place in `TensorKind`; the dispatcher rejects them.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "oneflow/core/common/dtype.h"
#include "oneflow/core/common/shape.h"
#include "oneflow/core/device/device.h"

namespace oneflow {

class Node;
class Storage;
struct GlobalMeta;  // framework/global.h

// Raised when the bytes of a global tensor are asked for (framework/global.cpp).
[[noreturn]] void throw_global_data_access();
// Raised when the bytes of a meta tensor are asked for: it has none.
[[noreturn]] void throw_meta_data_access();

namespace eager {
void wait_for(const Storage& storage);        // eager/engine.h
void wait_for_write(const Storage& storage);  // eager/engine.h
}  // namespace eager

// A block of device memory. Owned memory returns to its allocator when the last tensor viewing
// it is gone; borrowed memory (from NumPy, DLPack) calls its release function instead.
class Storage {
 public:
  // Allocates nbytes on `device` from its caching allocator.
  Storage(Device device, size_t nbytes);
  // Wraps memory owned elsewhere; `release` runs when the storage dies.
  Storage(Device device, void* data, size_t nbytes, std::function<void()> release);
  // Takes over the allocator memory of `dead`, a storage that only queued instructions still
  // use (eager::enqueue's stream-ordered reuse): the new storage returns it to the allocator;
  // host reads of it wait for the instructions that used `dead`.
  explicit Storage(Storage& dead);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // The bytes, once the queued instructions that use them have run (see eager/engine.h).
  void* data() const {
    if (last_use_.load(std::memory_order_acquire) != 0) eager::wait_for(*this);
    return data_;
  }
  // The bytes for reading only, once the queued instructions that write them have run: queued
  // readers may still be running (a host-side check of an index tensor that queued gathers
  // read does not wait for them).
  const void* read_data() const {
    if (last_write_.load(std::memory_order_acquire) != 0) eager::wait_for_write(*this);
    return data_;
  }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Sequence numbers of the last queued instruction using this storage and of the last one
  // writing it; 0 when none is pending. Written by the eager engine only.
  std::atomic<uint64_t>& last_use() const { return last_use_; }
  std::atomic<uint64_t>& last_write() const { return last_write_; }

  // True when code outside oneflow may read or write the bytes without synchronising (memory
  // borrowed from NumPy or DLPack, or lent to them by numpy() / to_dlpack / data_ptr()): ops
  // on such a storage run to completion before they return.
  bool shared_outside() const { return shared_outside_.load(std::memory_order_relaxed); }
  void set_shared_outside() const { shared_outside_.store(true, std::memory_order_relaxed); }
  // Allocator memory this storage still owns (not borrowed, not handed on).
  bool owns_allocation() const { return !release_ && !handed_on_; }

 private:
  Device device_;
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  std::function<void()> release_;  // empty for memory from the allocator
  bool handed_on_ = false;         // the memory went to another storage (Storage(Storage&))
  mutable std::atomic<uint64_t> last_use_{0};
  mutable std::atomic<uint64_t> last_write_{0};
  mutable std::atomic<bool> shared_outside_{false};
};

// Note [Version counter sharing]: every view of a storage shares one counter; in-place ops bump
// it, and autograd compares it with the value recorded when a tensor was saved for backward.
// Note [Inference tensors]: a tensor made while inference mode is on (`flow.inference_mode()`)
// is an inference tensor, and so is every view of it. Outside inference mode it may be read by
// any op, but not written in place nor saved for backward. The flag lives on the version counter,
// which a storage's tensor and all its views share. Inference mode is per thread.
bool inference_mode_enabled();
void set_inference_mode(bool enabled);

struct VersionCounter {
  std::atomic<int64_t> version{0};
  const bool inference = inference_mode_enabled();
};

struct TensorMeta {
  Shape shape;
  Strides strides;
  int64_t offset = 0;  // in elements
  DType dtype = DType::kFloat32;
  Device device;
};

enum class TensorKind : int8_t { kLocal, kGlobal, kLazy };

// Autograd state of one tensor (DESIGN.md section 6).
// A function of the gradient flowing into a tensor; returns a replacement or null (keep it).
using GradHook =
    std::function<std::shared_ptr<class TensorImpl>(const std::shared_ptr<class TensorImpl>&)>;

struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  std::shared_ptr<class TensorImpl> grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  int output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;  // leaves: the node that accumulates into .grad
  // Leaves' gradient hooks (non-leaf tensors keep theirs on grad_fn, per output), by id.
  std::vector<std::pair<int64_t, GradHook>> hooks;
};

class TensorImpl {
 public:
  TensorImpl(TensorMeta meta, std::shared_ptr<Storage> storage,
             std::shared_ptr<VersionCounter> version);

  const TensorMeta& meta() const { return meta_; }
  const Shape& shape() const { return meta_.shape; }
  const Strides& strides() const { return meta_.strides; }
  int64_t offset() const { return meta_.offset; }
  DType dtype() const { return meta_.dtype; }
  Device device() const { return meta_.device; }
  int64_t ndim() const { return static_cast<int64_t>(meta_.shape.size()); }
  int64_t numel() const { return oneflow::numel(meta_.shape); }
  bool is_contiguous() const { return oneflow::is_contiguous(meta_.shape, meta_.strides); }
  TensorKind kind() const { return kind_; }
  // A global tensor's placement, sbp and local shard; null for local tensors.
  const std::shared_ptr<const GlobalMeta>& global() const { return global_; }
  // Makes a fresh tensor global (null: local again).
  void set_global(std::shared_ptr<const GlobalMeta> g) {
    global_ = std::move(g);
    kind_ = global_ ? TensorKind::kGlobal : TensorKind::kLocal;
  }
  // True for tensors made by a view op (they alias another tensor's storage).
  bool is_view() const { return is_view_; }
  void set_is_view(bool v) { is_view_ = v; }
  // A view's base: the tensor (itself not a view) whose storage the chain of views started from.
  const std::shared_ptr<TensorImpl>& view_base() const { return view_base_; }
  void set_view_base(std::shared_ptr<TensorImpl> base) { view_base_ = std::move(base); }
  // A view's value of the shared version counter when its grad_fn was made: a different value
  // now means the base may have a new history (an in-place op), and the view's grad_fn is
  // regenerated from it before the view is used (dispatch.cpp, Note [In-place on views]).
  int64_t history_version() const { return history_version_; }
  void set_history_version(int64_t v) { history_version_ = v; }

  const std::shared_ptr<Storage>& storage() const { return storage_; }
  // Swaps in another storage of the same size: only for a tensor nothing else refers to yet
  // (the eager engine's stream-ordered reuse of a fresh output).
  void replace_storage(std::shared_ptr<Storage> s) { storage_ = std::move(s); }
  // `x.data = other`: takes other's storage and layout (shape, strides, dtype), keeping this
  // tensor's autograd state; it no longer aliases what it viewed. Only with no instruction
  // queued on it (the caller synchronises first): kernels read the layout when they run.
  void set_data(const TensorImpl& other) {
    meta_ = other.meta_;
    storage_ = other.storage_;
    global_ = other.global_;
    kind_ = other.kind_;
    is_view_ = false;
    view_base_.reset();
  }
  // Address of element 0 of this view; waits for queued instructions that use the storage.
  void* data() const {
    if (kind_ == TensorKind::kGlobal) throw_global_data_access();
    if (meta_.device.type == DeviceType::kMeta) [[unlikely]]
      throw_meta_data_access();
    return static_cast<char*>(storage_->data()) + meta_.offset * itemsize(meta_.dtype);
  }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data());
  }
  // For reading only: waits for the queued writers of the storage, not its queued readers.
  template <typename T>
  const T* read_as() const {
    if (kind_ == TensorKind::kGlobal) throw_global_data_access();
    if (meta_.device.type == DeviceType::kMeta) [[unlikely]]
      throw_meta_data_access();
    return reinterpret_cast<const T*>(static_cast<const char*>(storage_->read_data()) +
                                      meta_.offset * itemsize(meta_.dtype));
  }

  const std::shared_ptr<VersionCounter>& version_counter() const { return version_; }
  int64_t version() const { return version_->version.load(std::memory_order_relaxed); }
  void bump_version() { version_->version.fetch_add(1, std::memory_order_relaxed); }
  bool is_inference() const { return version_->inference; }

  AutogradMeta& autograd() { return autograd_; }
  const AutogradMeta& autograd() const { return autograd_; }
  bool requires_grad() const { return autograd_.requires_grad; }
  bool is_leaf() const { return autograd_.grad_fn == nullptr; }

  // References to this tensor held by instructions the eager engine has queued and not yet
  // reclaimed (eager/engine.cpp keeps the count): use_count() minus this is the references held
  // anywhere else. Read use_count() first: this count only falls meanwhile.
  int64_t queued_uses() const { return queued_uses_.load(std::memory_order_acquire); }
  void add_queued_uses(int64_t n) { queued_uses_.fetch_add(n, std::memory_order_acq_rel); }

 private:
  TensorMeta meta_;
  std::shared_ptr<Storage> storage_;
  std::shared_ptr<VersionCounter> version_;
  TensorKind kind_ = TensorKind::kLocal;
  std::shared_ptr<const GlobalMeta> global_;
  bool is_view_ = false;
  std::shared_ptr<TensorImpl> view_base_;
  int64_t history_version_ = 0;
  AutogradMeta autograd_;
  std::atomic<int64_t> queued_uses_{0};
};

using Tensor = std::shared_ptr<TensorImpl>;
using TensorList = std::vector<Tensor>;

// A new contiguous tensor with uninitialised memory.
Tensor empty_tensor(const Shape& shape, DType dtype, Device device);
// An uninitialised tensor with the given strides, which must be those of a dense tensor of
// `shape` in some order of its dims (elementwise_strides' result).
Tensor empty_strided_tensor(const Shape& shape, const Strides& strides, DType dtype, Device device);
// The layout of an elementwise result of `shape` (PyTorch's): dense, its dims in the memory
// order of the inputs (the first input that tells two dims apart decides their order). Empty
// when that is the contiguous layout, and whenever every input is contiguous (no sorting).
Strides elementwise_strides(const std::vector<std::shared_ptr<TensorImpl>>& inputs,
                            const Shape& shape);
// A tensor viewing `base`'s storage with other shape/strides/offset (shares the version counter).
Tensor make_view(const Tensor& base, const Shape& shape, const Strides& strides, int64_t offset);
// The same with another dtype over the same bytes (view_as_real, view_as_complex): strides and
// offset count elements of `dtype`.
Tensor make_view(const Tensor& base, const Shape& shape, const Strides& strides, int64_t offset,
                 DType dtype);
// A tensor sharing `t`'s storage and meta without its autograd state.
Tensor alias_detached(const Tensor& t);

}  // namespace oneflow
