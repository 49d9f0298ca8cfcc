// The CPU kernels of the comparisons, OF_COMPARE_FNS (common/op_kinds.h).
#include "oneflow/core/kernels/cpu/elementwise_fns.h"

namespace oneflow {

#define OF_COMPARE_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Compare, CompareFn, E)
OF_COMPARE_FNS(OF_COMPARE_KERNEL)

}  // namespace oneflow
