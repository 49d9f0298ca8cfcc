// Note [Unread saved tensors]: a primitive whose traits save its inputs or outputs may leave some
// of them unread for some attributes: the normalisations' and max poolings' gradients read the
// saved statistics and indices but never the result (output 0); scatter with reduce "add" or
// "none" reads only the index. The primitive's .cpp registers a rule next to its gradient; the
// dispatcher then keeps an unread output not at all and saves an unread input without a version
// check. So an in-place op on such a tensor (ReLU(inplace=True) after BatchNorm, `out +=
// identity`, `zeros(n).scatter_add_(0, index, src)`) leaves backward valid, as in PyTorch, and an
// unread result's memory goes when the program drops it.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// Whether the gradient of `prim` with `attrs` never reads its saved output (output = true) or
// input number `index`.
using UnreadSavedRule = bool (*)(const Attrs& attrs, bool output, size_t index);

inline std::unordered_map<const Primitive*, UnreadSavedRule>& unread_saved_rules() {
  static auto* rules = new std::unordered_map<const Primitive*, UnreadSavedRule>();
  return *rules;
}

// Called once per primitive, at static initialisation of its .cpp.
inline bool register_unread_saved(const Primitive& prim, UnreadSavedRule rule) {
  unread_saved_rules()[&prim] = rule;
  return true;
}

inline bool saved_unread(const Primitive& prim, const Attrs& attrs, bool output, size_t index) {
  const auto& rules = unread_saved_rules();
  auto it = rules.find(&prim);
  return it != rules.end() && it->second(attrs, output, index);
}

}  // namespace oneflow
