// The CPU kernels of the binary functions in OF_BINARY_FNS_2 (common/op_kinds.h).
#include "oneflow/core/kernels/cpu/elementwise_fns.h"

namespace oneflow {

#define OF_BINARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Binary, BinaryFn, E)
OF_BINARY_FNS_2(OF_BINARY_KERNEL)

}  // namespace oneflow
