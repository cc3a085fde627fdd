// lowbit: packers from the canonical weight forms into lowbit's own kernel layouts.
//
// Gemm::pack() calls these for the kernel it chose; they are public so that tools can pack
// offline (and tests can check layouts in CPU-only builds). Layouts depend on the weight
// format, n, k and the device, never on m.
//
// The tiled layout ("tiled_w4_v1", "tiled_w8_v1") of 4- and 8-bit integer weights is read
// by the sm80 mixed GEMM (and by the GEMV family for these formats). Its specification is
// docs/kernels/mixed_gemm.md ("Layout"); in short: 16-channel strips, 512-byte chunks of
// k (64 columns at 4 bits, 32 at 8 bits), each lane's 16 bytes its mma A fragments; scales
// (groups, n) in the activation dtype and u8 zero points (groups, n), channels in the pair
// order (g, g+8) inside each strip; act-order by a column permutation chosen here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit {

// "tiled_w4_v1" or "tiled_w8_v1".
std::string tiled_layout_name(int bits);

// Ok when the tiled layout holds weights of this format and shape: bits 4 or 8, symmetric
// or integer zero points, group 32/64/128 or per-channel, f16/bf16 scales, n a multiple of
// 16 and k of 64. Otherwise the reason, naming the operand.
Status tiled_layout_supports(const IntWeightFormat& f, int64_t n, int64_t k);

// Act-order (GPTQ g_idx): the column permutation the packer chooses. Columns are sorted
// by group (stable); when every group has exactly group_size columns (what GPTQ writes),
// packed group j is exactly original group g_order[j] and k' = k. Otherwise each group is
// cut into runs of group_size columns, the last run padded with zero columns (perm = -1),
// and k' (<= 2k + 64) grows; the GEMM gets k' from the index buffer.
struct TiledActOrder {
  int64_t k_packed = 0;          // k', a multiple of 64
  int64_t groups_packed = 0;     // k' / group_size
  bool uniform = true;           // every group had exactly group_size columns
  std::vector<int32_t> perm;     // (k') original column of packed column j, or -1 (padding)
  std::vector<int32_t> group_of; // (groups_packed) original group of packed group j
  // PackedWeight::index of the tiled layout: int32 {k', groups', 0, 0, perm[0..k'),
  // group_of[0..groups')}.
  std::vector<int32_t> index_buffer() const;
};
TiledActOrder plan_tiled_act_order(const int32_t* g_idx, int64_t k, int group_size);
// The largest k' any g_idx can produce: workspaces for the permuted activations use it.
inline int64_t tiled_act_order_max_k(int64_t k) { return 2 * k + 64; }

// Canonical -> tiled, on the host. Throws lowbit::Error when tiled_layout_supports() fails
// or the weight does not validate. Buffers: data (codes), scales (format.scale_dtype),
// zeros (u8, integer zero points only), index (act-order only).
PackedWeight pack_tiled(const IntWeight& w);

// Tiled -> canonical (exact inverse of pack_tiled; tests and tools).
IntWeight unpack_tiled(const PackedWeight& p);

// ---------------------------------------------------------------------------------------
// On-device repack: the same layout built by kernels from device buffers, from the
// canonical form or straight from GPTQ / AWQ checkpoint tensors (include/lowbit/import.hpp
// states their conventions). Bit for bit equal to pack_tiled() of the same weight.
// Returns a failed Status in builds without CUDA. Enqueued on `stream`, no allocation.
// ---------------------------------------------------------------------------------------
enum class RepackSource : uint8_t {
  kCanonical,  // codes u8 (n, k); scales fp32 (n, groups); zeros u8 (n, groups)
  kGptq,       // qweight i32 (k*bits/32, n); scales (groups, n) in the scale dtype;
               // qzeros i32 (groups, n*bits/32), stored as z - 1 (v1) or z (v2)
  kAwq,        // qweight i32 (k, n/8) in AWQ nibble order; scales (groups, n);
               // qzeros i32 (groups, n/8) in AWQ order (4-bit only)
};

struct DeviceRepackArgs {
  IntWeightFormat format;  // target format (scale_dtype: the scales' dtype on both sides)
  int64_t n = 0;
  int64_t k = 0;
  RepackSource source = RepackSource::kCanonical;
  bool gptq_v1_zeros = true;  // kGptq: qzeros hold z - 1 (AutoGPTQ "gptq"); false: "gptq_v2"
  // Sources, device memory. zeros is ignored for symmetric targets.
  const void* codes = nullptr;
  const void* scales = nullptr;
  const void* zeros = nullptr;
  // Act-order (kCanonical and kGptq): device copies of TiledActOrder::perm and ::group_of,
  // and its k' and group count. Null / 0 otherwise.
  const int32_t* perm = nullptr;
  const int32_t* group_of = nullptr;
  int64_t k_packed = 0;
  int64_t groups_packed = 0;
  // Destinations, device memory, sized as pack_tiled()'s data / scales / zeros.
  void* data = nullptr;
  void* packed_scales = nullptr;
  void* packed_zeros = nullptr;
};

Status repack_tiled_on_device(const DeviceRepackArgs& args, Stream stream);

}  // namespace lowbit
