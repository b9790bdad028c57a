#include "kernels/ref/fp_contract_off.h"  // the epilogue rounds as written

#include "kernels/conv/q8_dwconv_dequantized.h"

#include <algorithm>
#include <stdexcept>

namespace octet::kernels {

bool Q8DequantizedDwConv::supports(const Conv2dShape& s) {
  return s.groups == s.in_c && s.out_c == s.in_c && s.groups > 1 &&
         static_cast<int64_t>(s.kernel_h) * s.kernel_w < 514 && F32DwConv::supports(s, Activation{});
}

Q8DequantizedDwConv::Q8DequantizedDwConv(const Conv2dShape& s, Q8 x_type, const int8_t* w, DequantizedOutput out,
                                         Isa isa, PackedCache* cache)
    : s_(s), x_type_(x_type), out_(std::move(out)) {
  if (!supports(s)) throw std::invalid_argument("Q8DequantizedDwConv: not a depthwise convolution with < 514 taps");
  const size_t channels = static_cast<size_t>(s.out_c);
  if (out_.w_scale.size() != 1 && out_.w_scale.size() != channels)
    throw std::invalid_argument("Q8DequantizedDwConv: " + std::to_string(out_.w_scale.size()) +
                                " weight scales for " + std::to_string(channels) + " channels");
  if (!out_.bias.empty() && out_.bias.size() != channels)
    throw std::invalid_argument("Q8DequantizedDwConv: the bias needs one value per channel");
  const size_t taps = static_cast<size_t>(s.kernel_h) * s.kernel_w;
  std::vector<float> wf(channels * taps);
  for (size_t i = 0; i < wf.size(); ++i) wf[i] = static_cast<float>(w[i]);
  Conv2dShape image = s;
  image.batch = 1;
  conv_ = std::make_unique<F32DwConv>(image, wf.data(), nullptr, Activation{}, isa, cache);
  centered_ = aligned_zeroed_floats(static_cast<size_t>(s.in_h) * s.in_w * s.in_c);
  conv_->bind(centered_.get());
  scale_.resize(channels);
  epilogue_ = &choose_dequantized_epilogue(isa);
  activation_ = F32Epilogue(out_.act, isa);
}

void Q8DequantizedDwConv::run(const void* x, float x_scale, int32_t x_zero_point, float* y, pthreadpool_t pool,
                              OutputRange* range) {
  const size_t channels = static_cast<size_t>(s_.out_c);
  const bool per_channel = out_.w_scale.size() != 1;
  for (size_t k = 0; k < channels; ++k) scale_[k] = x_scale * out_.w_scale[per_channel ? k : 0];
  const size_t in_image = static_cast<size_t>(s_.in_h) * s_.in_w * s_.in_c;
  const size_t out_pixels = static_cast<size_t>(s_.out_h) * s_.out_w;
  float* c = centered_.get();
  const float lo = out_.lo, hi = out_.hi;
  const float* sc = scale_.data();
  const float* b = out_.bias.empty() ? nullptr : out_.bias.data();
  // The float epilogue and the range run on each output row as the conv finishes it (in L1).
  struct RowWork {
    const DequantizedEpilogueKernel* k;
    const F32Epilogue* activation;
    size_t channels;
    const float *scale, *bias;
    float lo, hi;
    OutputRange* range;
  } work{epilogue_, activation_.active() ? &activation_ : nullptr, channels, sc, b, lo, hi, range};
  const F32DwConv::RowHook hook{[](void* context, float* row, size_t n) {
                                  const RowWork& w = *static_cast<const RowWork*>(context);
                                  w.k->epilogue(n / w.channels, w.channels, row, w.scale, w.bias, w.lo, w.hi);
                                  if (w.activation) w.activation->run(n, row, row);
                                  if (w.range) w.range->add(n, row);
                                },
                                &work};
  for (int n = 0; n < s_.batch; ++n) {
    epilogue_->center(in_image, static_cast<const uint8_t*>(x) + n * in_image, x_type_ == Q8::s8, x_zero_point, c);
    conv_->run(c, y + n * out_pixels * channels, pool, &hook);
  }
}

}  // namespace octet::kernels
