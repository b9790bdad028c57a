#include "kernels/pool/pool2d.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/ref/qpool2d.h"

namespace octet::kernels {
namespace {

bool shape_ok(const Pool2dShape& s) {
  return s.batch >= 1 && s.in_h >= 1 && s.in_w >= 1 && s.channels >= 1 && s.out_h >= 1 && s.out_w >= 1 &&
         s.kernel_h >= 1 && s.kernel_w >= 1 && s.stride_h >= 1 && s.stride_w >= 1 && s.dilation_h >= 1 &&
         s.dilation_w >= 1 && s.in_d >= 1 && s.out_d >= 1 && s.kernel_d >= 1 && s.stride_d >= 1 &&
         s.dilation_d >= 1;
}

// Output rows (oz, oy) of one image, window taps, input elements of one image (2-D or 3-D).
size_t out_rows(const Pool2dShape& s) { return static_cast<size_t>(s.out_d) * s.out_h; }
size_t window_size(const Pool2dShape& s) { return static_cast<size_t>(s.kernel_d) * s.kernel_h * s.kernel_w; }

// The entry to run: `list`'s pick at `isa`, or none for a shape the microkernels do not take.
template <class Fn>
const PoolUkernel<Fn>* choose(std::span<const PoolUkernel<Fn>> list, const Pool2dShape& s, Isa isa) {
  return shape_ok(s) ? first_runnable(list, isa) : nullptr;
}

template <class Fn>
const PoolUkernel<Fn>* require(const PoolUkernel<Fn>& k, const Pool2dShape& s, const char* who) {
  if (!isa_supported(k.isa))
    throw std::invalid_argument(std::string(who) + ": kernel " + k.name + " needs " + isa_name(k.isa) +
                                ", which this CPU does not support");
  if (!shape_ok(s)) throw std::invalid_argument(std::string(who) + ": every size, stride and dilation must be >= 1");
  return &k;
}

// How many of the window positions o*stride - pad + k*dilation (k < kernel) fall in [lo, hi).
int positions_inside(int o, int stride, int pad, int kernel, int dilation, int lo, int hi) {
  int n = 0;
  for (int k = 0; k < kernel; ++k) {
    const int i = o * stride - pad + k * dilation;
    n += i >= lo && i < hi;
  }
  return n;
}

std::vector<double> avg_divisors(const Pool2dShape& s, bool count_include_pad) {
  std::vector<double> d(out_rows(s) * s.out_w);
  const int front = count_include_pad ? -s.pad_front : 0, back = count_include_pad ? s.in_d + s.pad_back : s.in_d;
  const int top = count_include_pad ? -s.pad_top : 0, bottom = count_include_pad ? s.in_h + s.pad_bottom : s.in_h;
  const int left = count_include_pad ? -s.pad_left : 0, right = count_include_pad ? s.in_w + s.pad_right : s.in_w;
  for (int oz = 0; oz < s.out_d; ++oz) {
    const int planes = positions_inside(oz, s.stride_d, s.pad_front, s.kernel_d, s.dilation_d, front, back);
    for (int oy = 0; oy < s.out_h; ++oy) {
      const int rows = positions_inside(oy, s.stride_h, s.pad_top, s.kernel_h, s.dilation_h, top, bottom);
      for (int ox = 0; ox < s.out_w; ++ox) {
        const int cols = positions_inside(ox, s.stride_w, s.pad_left, s.kernel_w, s.dilation_w, left, right);
        const int count = planes * rows * cols;
        d[(static_cast<size_t>(oz) * s.out_h + oy) * s.out_w + ox] = count > 0 ? double(count) : 1.0;
      }
    }
  }
  return d;
}

template <class T>
struct RowTask {
  void (*ukernel)(const PoolArgs<T>&);
  const Pool2dShape* s;
  const T* const* taps;
  const T* fill;
  const double* divisors;
  size_t sum_rows;
  T* y;
  const void* params;
};

}  // namespace

// ---- PoolWindows ----

template <class T>
PoolWindows<T>::PoolWindows(const Pool2dShape& s, T fill)
    : s_(s), fill_(static_cast<size_t>(std::max(s.channels, 0)), fill) {}

template <class T>
void PoolWindows<T>::bind(const T* x, bool build) {
  bound_ = x;
  if (!build || !shape_ok(s_)) return;
  const size_t C = static_cast<size_t>(s_.channels);
  taps_.assign(out_rows(s_) * s_.out_w * window_size(s_), fill_.data());
  const T** tap = taps_.data();
  for (int oz = 0; oz < s_.out_d; ++oz) {
    for (int oy = 0; oy < s_.out_h; ++oy) {
      for (int ox = 0; ox < s_.out_w; ++ox) {
        for (int kz = 0; kz < s_.kernel_d; ++kz) {
          const int iz = oz * s_.stride_d - s_.pad_front + kz * s_.dilation_d;
          for (int ky = 0; ky < s_.kernel_h; ++ky) {
            const int iy = oy * s_.stride_h - s_.pad_top + ky * s_.dilation_h;
            for (int kx = 0; kx < s_.kernel_w; ++kx, ++tap) {
              const int ix = ox * s_.stride_w - s_.pad_left + kx * s_.dilation_w;
              if (iz >= 0 && iz < s_.in_d && iy >= 0 && iy < s_.in_h && ix >= 0 && ix < s_.in_w)
                *tap = x + ((static_cast<size_t>(iz) * s_.in_h + iy) * s_.in_w + ix) * C;
            }
          }
        }
      }
    }
  }
}

template <class T>
void PoolWindows<T>::check_bound(const T* x, const char* who) const {
  if (x != bound_ || x == nullptr)
    throw std::invalid_argument(std::string(who) + "::run: the input is not the one bind() was given; call bind(x) first");
}

template <class T>
void PoolWindows<T>::row_task(void* context, size_t row) {
  const RowTask<T>& task = *static_cast<const RowTask<T>*>(context);
  const Pool2dShape& s = *task.s;
  // oy: the output row (oz, oy) within the image.
  const size_t n = row / out_rows(s), oy = row % out_rows(s);
  const size_t C = static_cast<size_t>(s.channels), out_w = static_cast<size_t>(s.out_w);
  const size_t kernel_size = window_size(s);
  PoolArgs<T> a;
  a.taps = task.taps + oy * out_w * kernel_size;
  a.zero = task.fill;
  a.input_offset = n * static_cast<size_t>(s.in_d) * s.in_h * s.in_w * C * sizeof(T);
  a.pixels = out_w;
  a.kernel_size = kernel_size;
  a.channels = C;
  a.y = task.y + row * out_w * C;
  a.divisors = task.divisors ? task.divisors + oy * out_w : nullptr;
  a.sum_rows = task.sum_rows;
  a.params = task.params;
  task.ukernel(a);
}

template <class T>
void PoolWindows<T>::run(void (*ukernel)(const PoolArgs<T>&), T* y, pthreadpool_t pool, const void* params) const {
  RowTask<T> task{ukernel, &s_, taps_.data(), fill_.data(), divisors_.empty() ? nullptr : divisors_.data(), sum_rows_, y, params};
  pthreadpool_parallelize_1d(pool, &PoolWindows<T>::row_task, &task, static_cast<size_t>(s_.batch) * out_rows(s_), 0);
}

template class PoolWindows<float>;
template class PoolWindows<uint8_t>;

// ---- F32MaxPool2d ----

F32MaxPool2d::F32MaxPool2d(const Pool2dShape& s, Isa isa)
    : s_(s), ukernel_(choose(kF32MaxPoolUkernels, s, isa)), windows_(s, std::numeric_limits<float>::lowest()) {}

F32MaxPool2d::F32MaxPool2d(const Pool2dShape& s, const PoolUkernel<F32PoolUkernel>& ukernel)
    : s_(s), ukernel_(require(ukernel, s, "F32MaxPool2d")), windows_(s, std::numeric_limits<float>::lowest()) {}

KernelId F32MaxPool2d::kernel_id() const { return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("f32_maxpool2d_nhwc__ref"); }

void F32MaxPool2d::bind(const float* x) { windows_.bind(x, ukernel_ != nullptr); }

void F32MaxPool2d::run(const float* x, float* y, pthreadpool_t pool) const {
  windows_.check_bound(x, "F32MaxPool2d");
  if (ukernel_) windows_.run(ukernel_->fn, y, pool);
  else f32_maxpool2d_nhwc__ref(s_, x, y);
}

// ---- Q8MaxPool2d ----

namespace {
uint8_t q8_lowest_byte(Q8 type) { return static_cast<uint8_t>(q8_min(type)); }
}  // namespace

Q8MaxPool2d::Q8MaxPool2d(Q8 type, const Pool2dShape& s, Isa isa)
    : type_(type),
      s_(s),
      ukernel_(choose(type == Q8::u8 ? kQu8MaxPoolUkernels : kQs8MaxPoolUkernels, s, isa)),
      windows_(s, q8_lowest_byte(type)) {}

Q8MaxPool2d::Q8MaxPool2d(Q8 type, const Pool2dShape& s, const PoolUkernel<Q8PoolUkernel>& ukernel)
    : type_(type), s_(s), ukernel_(require(ukernel, s, "Q8MaxPool2d")), windows_(s, q8_lowest_byte(type)) {}

KernelId Q8MaxPool2d::kernel_id() const { return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("q8_maxpool2d_nhwc__ref"); }

void Q8MaxPool2d::bind(const void* x) { windows_.bind(static_cast<const uint8_t*>(x), ukernel_ != nullptr); }

void Q8MaxPool2d::run(const void* x, void* y, pthreadpool_t pool) const {
  windows_.check_bound(static_cast<const uint8_t*>(x), "Q8MaxPool2d");
  if (ukernel_) windows_.run(ukernel_->fn, static_cast<uint8_t*>(y), pool);
  else if (type_ == Q8::u8)
    q8_maxpool2d_nhwc__ref(s_, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
  else
    q8_maxpool2d_nhwc__ref(s_, static_cast<const int8_t*>(x), static_cast<int8_t*>(y));
}

// ---- F32AvgPool2d ----

// MLAS's SSE2 baseline has NCHWc kernels too; its AArch64 ones are off in default builds.
int ort_nchwc_block() {
#if OCTET_ARCH_X86
  return cpu_has(kAvx512F) ? 16 : 8;
#else
  return 0;
#endif
}

F32AvgPool2d::F32AvgPool2d(const Pool2dShape& s, bool count_include_pad, Isa isa, bool ort_nchwc)
    : s_(s), count_include_pad_(count_include_pad), ukernel_(choose(kF32AvgPoolUkernels, s, isa)), windows_(s, 0.0f) {
  if (ukernel_) windows_.set_divisors(avg_divisors(s, count_include_pad));
  windows_.set_sum_rows(f32_avgpool_sum_rows(s, ort_nchwc ? ort_nchwc_block() : 0));
}

F32AvgPool2d::F32AvgPool2d(const Pool2dShape& s, bool count_include_pad, const PoolUkernel<F32PoolUkernel>& ukernel)
    : s_(s), count_include_pad_(count_include_pad), ukernel_(require(ukernel, s, "F32AvgPool2d")), windows_(s, 0.0f) {
  windows_.set_divisors(avg_divisors(s, count_include_pad));
  windows_.set_sum_rows(f32_avgpool_sum_rows(s, ort_nchwc_block()));
}

KernelId F32AvgPool2d::kernel_id() const { return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("f32_avgpool2d_nhwc__ref"); }

void F32AvgPool2d::bind(const float* x) { windows_.bind(x, ukernel_ != nullptr); }

void F32AvgPool2d::run(const float* x, float* y, pthreadpool_t pool) const {
  windows_.check_bound(x, "F32AvgPool2d");
  if (ukernel_) windows_.run(ukernel_->fn, y, pool);
  else f32_avgpool2d_nhwc__ref(s_, count_include_pad_, x, y, windows_.sum_rows());
}

// ---- Q8AvgPool2d ----

namespace {

// q8_avgpool2d_nhwc__ref's divisor: the whole window with count_include_pad (also where it
// runs past the trailing pad), else the taps inside the input (none: 1, over a sum of 0).
std::vector<double> q8_avg_divisors(const Pool2dShape& s, bool count_include_pad) {
  if (!count_include_pad) return avg_divisors(s, false);
  return std::vector<double>(out_rows(s) * s.out_w, double(window_size(s)));
}

}  // namespace

Q8AvgPool2d::Q8AvgPool2d(Q8 type, const Pool2dShape& s, bool count_include_pad, const Q8AvgPoolParams& params,
                         Isa isa)
    : type_(type),
      s_(s),
      count_include_pad_(count_include_pad),
      params_(params),
      ukernel_(choose(type == Q8::u8 ? kQu8AvgPoolUkernels : kQs8AvgPoolUkernels, s, isa)),
      windows_(s, static_cast<uint8_t>(params.x_zero_point)) {
  if (ukernel_) windows_.set_divisors(q8_avg_divisors(s, count_include_pad));
}

Q8AvgPool2d::Q8AvgPool2d(Q8 type, const Pool2dShape& s, bool count_include_pad, const Q8AvgPoolParams& params,
                         const PoolUkernel<Q8PoolUkernel>& ukernel)
    : type_(type),
      s_(s),
      count_include_pad_(count_include_pad),
      params_(params),
      ukernel_(require(ukernel, s, "Q8AvgPool2d")),
      windows_(s, static_cast<uint8_t>(params.x_zero_point)) {
  windows_.set_divisors(q8_avg_divisors(s, count_include_pad));
}

KernelId Q8AvgPool2d::kernel_id() const { return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("q8_avgpool2d_nhwc__ref"); }

void Q8AvgPool2d::bind(const void* x) { windows_.bind(static_cast<const uint8_t*>(x), ukernel_ != nullptr); }

void Q8AvgPool2d::run(const void* x, void* y, pthreadpool_t pool) const {
  windows_.check_bound(static_cast<const uint8_t*>(x), "Q8AvgPool2d");
  if (ukernel_) {
    windows_.run(ukernel_->fn, static_cast<uint8_t*>(y), pool, &params_);
    return;
  }
  const QuantParams xq{params_.x_scale, params_.x_zero_point}, yq{params_.y_scale, params_.y_zero_point};
  if (type_ == Q8::u8)
    q8_avgpool2d_nhwc__ref(s_, count_include_pad_, static_cast<const uint8_t*>(x), xq, yq, static_cast<uint8_t*>(y));
  else
    q8_avgpool2d_nhwc__ref(s_, count_include_pad_, static_cast<const int8_t*>(x), xq, yq, static_cast<int8_t*>(y));
}

}  // namespace octet::kernels
