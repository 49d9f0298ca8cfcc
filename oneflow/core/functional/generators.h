// The default random generators: the CPU's (default_generator() in functional.h) and one per
// CUDA device. A random op without an explicit generator draws from the generator of the device
// it writes, as in PyTorch, so CUDA random ops do not move the CPU's stream; manual_seed seeds
// all of them.
#pragma once

#include <memory>

#include "oneflow/core/device/device.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow {

// The default generator of `device`. A CUDA device's is made on first use, seeded with the last
// seed given to manual_seed (the default seed before any).
std::shared_ptr<Generator> default_generator(const Device& device);

}  // namespace oneflow
