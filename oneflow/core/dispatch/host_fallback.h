// Note [Host fallback]: a primitive without a CUDA kernel yet runs on the host for CUDA tensors.
//
// The CUDA entry points of such primitives (kernels/cuda/pending.cpp, kernels/cuda/nn.cpp)
// register their classes here. When every input of one of them is on a GPU, eager dispatch runs
// it as three ops instead of raising: copies of the inputs to the host, the primitive on those
// (its CPU kernel, its CPU meta inference), and copies of the outputs back to the inputs' GPU.
// The copies are differentiable, so autograd records them with the host op, and the gradient
// runs the same way; an in-place op computes out of place on the host and copies the result
// into its GPU output. This is PyTorch's CPU fallback for the MPS backend, on by default here:
// each primitive says once on stderr that it ran on the host (kernels may run on stream
// threads, so the note is not a Python warning). ONEFLOW_CUDA_HOST_FALLBACK=0 restores the
// NotImplementedError that names the primitive. A real CUDA kernel removes the class from the
// registry by replacing its stub.
#pragma once

#include <typeindex>
#include <typeinfo>

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// Called at static initialisation by the stubs; returns true.
bool register_cuda_pending(std::type_index primitive_class);

// Whether `prim` has no CUDA kernel yet (always false in a build without CUDA).
bool cuda_kernel_pending(const Primitive& prim);

// Whether the host fallback is on (ONEFLOW_CUDA_HOST_FALLBACK, default 1), read once.
bool host_fallback_enabled();

// The once-per-primitive note on stderr that `prim` ran on the host.
void note_host_fallback(const Primitive& prim);

}  // namespace oneflow
