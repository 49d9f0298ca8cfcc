// The CPU kernels of the unary functions in OF_UNARY_FNS_1 (common/op_kinds.h).
#include "oneflow/core/kernels/cpu/elementwise_fns.h"

namespace oneflow {

#define OF_UNARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Unary, UnaryFn, E)
OF_UNARY_FNS_1(OF_UNARY_KERNEL)

}  // namespace oneflow
