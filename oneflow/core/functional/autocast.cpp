#include "oneflow/core/functional/autocast.h"

#include "oneflow/core/functional/functional.h"

namespace oneflow::autocast {

namespace {
thread_local State t_state[2] = {State{false, DType::kBFloat16},  // CPU
                                 State{false, DType::kFloat16}};  // CUDA
thread_local bool t_active = false;

int slot(DeviceType type) { return type == DeviceType::kCPU ? 0 : 1; }
void refresh() { t_active = t_state[0].enabled || t_state[1].enabled; }
}  // namespace

State& state(DeviceType type) {
  // The caller may flip `enabled`: recompute the fast flag at the next cast.
  State& s = t_state[slot(type)];
  t_active = true;
  return s;
}

bool active() {
  if (t_active) refresh();
  return t_active;
}

Suspend::Suspend() {
  saved_[0] = t_state[0];
  saved_[1] = t_state[1];
  t_state[0].enabled = t_state[1].enabled = false;
  refresh();
}

Suspend::~Suspend() {
  t_state[0] = saved_[0];
  t_state[1] = saved_[1];
  refresh();
}

std::optional<DType> lower_dtype(const Tensor& t) {
  if (!t || !active()) return std::nullopt;
  const State& s = t_state[slot(t->device().type)];
  if (!s.enabled || !is_floating(t->dtype()) || t->dtype() == DType::kFloat64) return std::nullopt;
  return s.dtype;
}

Tensor lower(const Tensor& t) {
  const std::optional<DType> dt = lower_dtype(t);
  return dt && *dt != t->dtype() ? functional::to(t, *dt, std::nullopt) : t;
}

Tensor to_float(const Tensor& t, bool cuda_only) {
  if (!t || !active()) return t;
  if (cuda_only && t->device().type != DeviceType::kCUDA) return t;
  const State& s = t_state[slot(t->device().type)];
  if (!s.enabled || (t->dtype() != DType::kFloat16 && t->dtype() != DType::kBFloat16)) return t;
  return functional::to(t, DType::kFloat32, std::nullopt);
}

}  // namespace oneflow::autocast
