// lowbit: quantized matrix-multiply kernels for LLM inference. The umbrella header.
// All public headers are host-only C++17: no nvcc needed to include them.
#pragma once

#include "lowbit/act_quant.hpp"
#include "lowbit/checkpoint.hpp"
#include "lowbit/device.hpp"
#include "lowbit/dtype.hpp"
#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/import_fp8.hpp"
#include "lowbit/import_int8.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "lowbit/safetensors.hpp"
#include "lowbit/status.hpp"
#include "lowbit/version.hpp"
