// Shapes and strides (in elements), and the helpers every op uses on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace oneflow {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

int64_t numel(const Shape& shape);
Strides contiguous_strides(const Shape& shape);
bool is_contiguous(const Shape& shape, const Strides& strides);
// "(2, 3)" like a Python tuple, for messages.
std::string shape_str(const Shape& shape);
// Broadcasts two shapes by NumPy's rules; throws ValueError naming `op` when they don't match.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);
// Wraps a possibly negative dim into [0, ndim); throws IndexError naming `op` when out of range.
int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim);

}  // namespace oneflow
