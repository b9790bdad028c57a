#pragma once
// FP32 pointwise (1x1) conv followed by a depthwise conv, NHWC, without writing the wide
// intermediate to memory: the inverted-residual "expand" of MobileNetV2 / V3 and EfficientNet.
//
// Unfused, the expand conv writes in_h x in_w x mid floats per image (4.8 MB at MobileNetV2's
// 112x112x96) and the depthwise conv reads them back, both from DRAM. Here the expand GEMM
// writes the rows of the intermediate into a ring of a few rows that stays in L2, and the
// depthwise conv consumes each band of output rows as soon as the input rows it reads are in
// the ring. Input row iy lives in ring slot iy % ring_rows: the depthwise row pointers are
// built once for the ring's address (F32DwConv::bind_ring), so nothing is rebuilt per band.
//
// Results equal the two convs run one after the other: the same microkernels sum in the same
// order; only which pixels a GEMM call covers changes.
#include <pthreadpool.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/aligned_buffer.h"
#include "kernels/cache_budgets.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/isa.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

// When an image runs through a ring of rows, and how many rows the ring holds.
struct PwDwRingLimits {
  // Six L1Ds (cache_budgets: 192 KiB measured best on Zen 1 and Zen 4).
  size_t ring_bytes = cache_budgets().pwdw_ring;
  // An intermediate image up to this size runs whole (expand, then depthwise, through one
  // image of scratch): it comes back from L2 or L3 anyway, and bands of rows cost more GEMM
  // calls and shorter depthwise rows. On Zen 1, with rings in buffers of their own (before
  // they moved to the plan's arena), MobileNetV2's 14x14x576 blocks (451 KiB) ran 2-4% slower
  // fused than unfused while 56x56x144 (1.8 MiB) and larger ran faster; arena rings at 14x14
  // were not measured. The L2 (cache_budgets): between those two on Zen 1.
  size_t whole_image_bytes = cache_budgets().pwdw_whole_image;
};

// Microkernels a benchmark forces on the two convs (bench/dispatch_check times a pair with each
// candidate); nullptr: the one the conv would choose.
struct PwDwKernels {
  const F32GemmKernel* pw = nullptr;
  const F32DwConvKernel* dw = nullptr;
};

class F32PointwiseDwConv {
 public:
  // dw: the depthwise conv's shape (in_c == out_c == groups == the expand's output channels,
  // batch = images); in_c: the expand's input channels. pw_weights: [mid][in_c] (ONNX
  // [mid][in_c][1][1]); dw_weights: [mid][1][kh][kw]; biases may be nullptr. Throws
  // std::invalid_argument when no microkernel runs either conv under the cap `isa` (the
  // caller then runs the two reference convs). threads: the pool's thread count run() will be
  // given (one ring per thread). scratch: scratch_floats() floats, 64-byte aligned, that only
  // this conv uses while it runs (the plan's arena); nullptr: the conv allocates its own.
  // cache: where both convs take their packed weights when it holds the same recipe
  // (kernels/packed_cache.h); nullptr: packed here, once for all the rings. forced: the
  // microkernels to run instead of the chosen ones (their ISA must run on this CPU).
  F32PointwiseDwConv(const Conv2dShape& dw, int in_c, const float* pw_weights, const float* pw_bias,
                     const Activation& pw_act, const float* dw_weights, const float* dw_bias,
                     const Activation& dw_act, Isa isa, size_t threads = 1, const PwDwRingLimits& limits = {},
                     float* scratch = nullptr, PackedCache* cache = nullptr, const PwDwKernels& forced = {});

  // The rings' floats for this shape, thread count and limits.
  static size_t scratch_floats(const Conv2dShape& dw, size_t threads, const PwDwRingLimits& limits = {});

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }
  int ring_rows() const { return rings_.rows; }  // input rows a ring holds (in_h: whole images)
  int band_rows() const { return rings_.band; }  // output rows per band (out_h: whole images)

  // x: [batch][in_h][in_w][in_c], y: [batch][out_h][out_w][mid]. Uses the rings: one run at a
  // time. With several threads each takes its own ring: whole images when the batch has at
  // least one per thread, else bands of rows of one image (the rows at a band's edges are
  // expanded by both neighbours).
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  struct Lane {  // one thread's ring and the depthwise conv bound to it
    float* ring;
    std::unique_ptr<F32DwConv> dw;
  };
  struct Rings {
    int band, rows;  // output rows per band, input rows per ring
    bool whole_image;
  };
  static Rings rings_for(const Conv2dShape& dw, const PwDwRingLimits& limits);
  struct Task;
  static void lane_task(void* context, size_t lane);
  // Output rows [first, end) of image n, on lane `lane`; pool: threads inside the calls.
  void run_rows(const Lane& lane, const float* x, float* y, int n, int first, int end, pthreadpool_t pool) const;

  Conv2dShape s_;  // the depthwise conv's, batch 1 (one image at a time)
  int batch_, in_c_;
  Rings rings_{};  // whole_image: a ring holds all in_h rows (expand the image, then the depthwise conv)
  std::unique_ptr<F32Gemm> pw_;
  std::vector<Lane> lanes_;
  AlignedFloats own_scratch_;  // when the caller gave none
  KernelId name_;
};

}  // namespace octet::kernels
