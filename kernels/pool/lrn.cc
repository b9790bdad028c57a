#include "kernels/pool/lrn.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace octet::kernels {
namespace {

void check(const LrnParams& p, size_t channels) {
  if (p.size < 1) throw std::invalid_argument("LRN: size must be >= 1");
  if (channels == 0) throw Unsupported("no channels");
  if (!(std::isfinite(p.beta) && p.beta > 0.0f) || !std::isfinite(p.alpha) || !std::isfinite(p.bias))
    throw Unsupported("alpha, beta or bias outside the vector power's range (beta > 0, all finite)");
}

struct Task {
  const LrnUkernel* ukernel;
  const LrnParams* params;
  size_t channels, pixels, blocks_per_part, block;
  const float* x;
  float* y;
  char* scratch;
  size_t part_bytes;
};

void run_part(void* context, size_t part) {
  const Task& t = *static_cast<const Task*>(context);
  const size_t first = part * t.blocks_per_part * t.block;
  if (first >= t.pixels) return;
  const size_t n = std::min(t.pixels - first, t.blocks_per_part * t.block);
  const LrnArgs a{t.params, n, t.channels, t.x + first * t.channels, t.y + first * t.channels,
                  reinterpret_cast<float*>(t.scratch + part * t.part_bytes)};
  t.ukernel->fn(a);
}

}  // namespace

F32Lrn::F32Lrn(const LrnParams& p, size_t channels, Isa isa) : params_(p), channels_(channels) {
  check(p, channels);
  ukernel_ = first_runnable(kF32LrnUkernels, isa);
  if (!ukernel_) throw Unsupported("no LRN microkernel at this level");
}

F32Lrn::F32Lrn(const LrnParams& p, size_t channels, const LrnUkernel& ukernel)
    : params_(p), channels_(channels), ukernel_(&ukernel) {
  check(p, channels);
  if (!isa_supported(ukernel.isa))
    throw std::invalid_argument(std::string("F32Lrn: kernel ") + ukernel.name + " needs " + isa_name(ukernel.isa) +
                                ", which this CPU does not support");
}

size_t F32Lrn::part_bytes() const {
  return (lrn_scratch_floats(channels_, size_t(params_.size), ukernel_->lanes) * sizeof(float) + 63) / 64 * 64;
}

size_t F32Lrn::scratch_bytes(size_t threads) const { return std::max<size_t>(threads, 1) * part_bytes(); }

void F32Lrn::run(const float* x, float* y, size_t pixels, void* scratch, pthreadpool_t pool) const {
  if (pixels == 0) return;
  const size_t block = kLrnBlockVectors * ukernel_->lanes;
  const size_t blocks = (pixels + block - 1) / block;
  const size_t threads = pool ? std::max<size_t>(pthreadpool_get_threads_count(pool), 1) : 1;
  const size_t parts = std::min(threads, blocks);
  Task t{ukernel_, &params_, channels_, pixels, (blocks + parts - 1) / parts, block, x, y,
         static_cast<char*>(scratch), part_bytes()};
  if (parts == 1) run_part(&t, 0);
  else pthreadpool_parallelize_1d(pool, &run_part, &t, parts, 0);
}

}  // namespace octet::kernels
