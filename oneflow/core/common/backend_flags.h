// Process-wide switches of the kernels' numerics, as PyTorch's global context:
// torch.set_float32_matmul_precision and torch.use_deterministic_algorithms.
#pragma once

namespace oneflow {

// How float32 matrix products may compute on CUDA: kHighest in float32; kHigh with TF32 tensor
// cores; kMedium with bfloat16 tensor cores. CPU products stay float32 at every level.
enum class MatmulPrecision { kHighest = 0, kHigh = 1, kMedium = 2 };
MatmulPrecision float32_matmul_precision();
void set_float32_matmul_precision(MatmulPrecision p);

// PyTorch's deterministic debug mode: 0 off, 1 warn, 2 error.
int deterministic_mode();
void set_deterministic_mode(int mode);

// Called by a kernel that has no deterministic implementation (floating-point atomics on CUDA)
// before it runs: raises RuntimeError naming `op` in error mode, warns once per op (on stderr:
// kernels may run on a stream thread) in warn mode. `warn_only` warns in both modes: for
// kernels that PyTorch runs deterministically where oneflow does not yet (the gradient of a
// gather), so that turning determinism on does not stop training.
void check_deterministic(const char* op, bool warn_only = false);

// Anomaly detection (torch.autograd.detect_anomaly): 0 off, 1 on and backward checks every
// gradient a function returns for NaN, 2 on without the NaN check.
int anomaly_mode();
void set_anomaly_mode(int mode);

}  // namespace oneflow
