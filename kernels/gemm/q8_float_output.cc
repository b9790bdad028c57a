#include "kernels/gemm/q8_float_output.h"

#include <stdexcept>
#include <string>

#include "kernels/ref/elementwise.h"

namespace octet::kernels {

void apply_dequantized_activation__ref(const DequantizedOutput& out, int64_t count, float* y) {
  if (out.act.kind != ActKind::none && out.act.kind != ActKind::relu && out.act.kind != ActKind::clip)
    f32_unary__ref(out.act, count, y, y);
}

Q8FloatOutput::Q8FloatOutput(DequantizedOutput out, std::vector<int64_t> column_sums, size_t nr, Q8 reads, Isa isa)
    : out_(std::move(out)), activation_(out_.act, isa), column_sums_(std::move(column_sums)), nr_(nr), reads_(reads) {
  const size_t n = column_sums_.size();
  if (out_.w_scale.size() != 1 && out_.w_scale.size() != n)
    throw std::invalid_argument("Q8FloatOutput: " + std::to_string(out_.w_scale.size()) +
                                " weight scales for " + std::to_string(n) + " output channels");
  if (!out_.bias.empty() && out_.bias.size() != n)
    throw std::invalid_argument("Q8FloatOutput: " + std::to_string(out_.bias.size()) +
                                " bias values for " + std::to_string(n) + " output channels");
  const size_t padded = (n + nr - 1) / nr * nr;
  if (!out_.bias.empty()) {
    bias_.assign(padded, 0.0f);
    std::copy(out_.bias.begin(), out_.bias.end(), bias_.begin());
  }
  acc_init_.assign(padded, 0);
  scale_.assign(padded, 0.0f);
}

void Q8FloatOutput::prepare(Q8 x_type, float x_scale, int32_t x_zero_point) {
  const int64_t zp_r = int64_t{x_zero_point} + q8_read_shift(reads_, x_type);
  const bool per_channel = out_.w_scale.size() != 1;
  for (size_t c = 0; c < column_sums_.size(); ++c) {
    acc_init_[c] = static_cast<int32_t>(static_cast<uint32_t>(-zp_r * column_sums_[c]));  // modulo 2^32
    scale_[c] = x_scale * out_.w_scale[per_channel ? c : 0];
  }
}

void Q8FloatOutput::set_args(Q8IgemmArgs& args, size_t block) const {
  args.acc_init = acc_init_.data() + block * nr_;
  args.scale = scale_.data() + block * nr_;
  args.out_bias = bias_.empty() ? nullptr : bias_.data() + block * nr_;
  args.lo = out_.lo;
  args.hi = out_.hi;
}

}  // namespace octet::kernels
