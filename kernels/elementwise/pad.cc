#include "kernels/elementwise/pad.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace octet::kernels {

namespace {

// A pooled run splits when the output holds at least this many bytes, into at least kMinTasks
// blocks (fewer only when the outer axes have fewer indices).
constexpr int64_t kParallelBytes = 128 * 1024;
constexpr int64_t kMinTasks = 16;


template <class T>
void fill_as(unsigned char* y, int64_t count, const void* value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  std::fill_n(reinterpret_cast<T*>(y), count, v);
}

template <size_t N>
inline void copy_fixed(unsigned char* y, const unsigned char* x) {
  std::memcpy(y, x, N);
}

}  // namespace

PadRows::PadRows(int rank, const int64_t* in_dims, const int64_t* pads_begin, const int64_t* pads_end, PadMode mode,
                 size_t elem_size)
    : elem_(elem_size) {
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)
    throw std::invalid_argument("pad_rows: elements of " + std::to_string(elem_size) + " bytes (1, 2, 4 or 8 expected)");
  struct Raw {
    int64_t in, begin, end;
    bool unpadded() const { return begin == 0 && end == 0; }
  };
  std::vector<Raw> raw;
  for (int d = 0; d < rank; ++d) {
    const int64_t out = in_dims[d] + pads_begin[d] + pads_end[d];
    if (in_dims[d] < 0 || out < 0) throw std::invalid_argument("pad_rows: a negative extent");
    if (out == 0) empty_ = true;
    if (in_dims[d] == 1 && pads_begin[d] == 0 && pads_end[d] == 0) continue;
    raw.push_back({in_dims[d], pads_begin[d], pads_end[d]});
  }
  if (empty_) return;
  unit_ = int64_t(elem_size);
  while (!raw.empty() && raw.back().unpadded()) {
    unit_ *= raw.back().in;
    raw.pop_back();
  }
  std::vector<Raw> merged;
  for (const Raw& r : raw) {
    if (!merged.empty() && merged.back().unpadded() && r.unpadded()) merged.back().in *= r.in;
    else merged.push_back(r);
  }
  if (merged.empty()) merged.push_back({1, 0, 0});

  axes_.resize(merged.size());
  int64_t in_stride = unit_, out_stride = unit_;
  for (size_t k = merged.size(); k-- > 0;) {
    Axis& a = axes_[k];
    a.in = merged[k].in;
    a.begin = merged[k].begin;
    a.out = a.in + a.begin + merged[k].end;
    a.in_stride = in_stride;
    a.out_stride = out_stride;
    in_stride *= a.in;
    out_stride *= a.out;
    a.steps.resize(size_t(a.out));
    for (int64_t o = 0; o < a.out; ++o) {
      const int64_t s = pad_source_index(o - a.begin, a.in, mode);
      const int64_t home = s + a.begin;
      Step& st = a.steps[size_t(o)];
      st.src = s;
      st.home = home;
      st.act = s < 0                                    ? Act::fill
               : home != o && home >= 0 && home < a.out ? Act::copy
                                                        : Act::walk;
    }
  }
  const int64_t total = out_stride;

  // The tasks: one per index of the outer axes [0, split_).
  const int rank_left = int(axes_.size());
  int64_t blocks = 1;
  if (total >= kParallelBytes)
    while (split_ < rank_left - 1 && blocks < kMinTasks) blocks *= axes_[size_t(split_++)].out;
  task_bytes_ = split_ == 0 ? total : axes_[size_t(split_ - 1)].out_stride;
  std::vector<std::vector<Task>> phases(size_t(split_) + 1);
  std::vector<int64_t> idx(size_t(split_), 0);
  for (int64_t b = 0; b < blocks; ++b) {
    Task t{Act::walk, 0, 0, 0};
    int first_copy = -1;
    for (int j = 0; j < split_; ++j) {
      const Axis& a = axes_[size_t(j)];
      const Step& st = a.steps[size_t(idx[size_t(j)])];
      t.out_off += idx[size_t(j)] * a.out_stride;
      if (st.act == Act::fill) t.act = Act::fill;
      if (st.act == Act::copy && first_copy < 0) {
        first_copy = j;
        t.src_off = (st.home - idx[size_t(j)]) * a.out_stride;
      }
      if (st.src >= 0) t.in_off += st.src * a.in_stride;
    }
    size_t phase = 0;
    if (t.act != Act::fill && first_copy >= 0) {
      t.act = Act::copy;
      t.src_off += t.out_off;
      phase = size_t(split_ - first_copy);  // the deepest copying axis first
    }
    phases[phase].push_back(t);
    for (int j = split_ - 1; j >= 0; --j) {
      if (++idx[size_t(j)] < axes_[size_t(j)].out) break;
      idx[size_t(j)] = 0;
    }
  }
  for (auto& p : phases) {
    tasks_.insert(tasks_.end(), p.begin(), p.end());
    phase_end_.push_back(tasks_.size());
  }
}

void PadRows::fill(unsigned char* y, int64_t bytes, const void* value) const {
  if (bytes <= 0) return;
  static const uint64_t zero = 0;
  if (value == nullptr) value = &zero;
  const auto* v = static_cast<const unsigned char*>(value);
  if (std::all_of(v, v + elem_, [&](unsigned char b) { return b == v[0]; })) {
    std::memset(y, v[0], size_t(bytes));
    return;
  }
  const int64_t count = bytes / int64_t(elem_);
  switch (elem_) {
    case 2: return fill_as<uint16_t>(y, count, value);
    case 4: return fill_as<uint32_t>(y, count, value);
    default: return fill_as<uint64_t>(y, count, value);
  }
}

void PadRows::write_row(const unsigned char* x, unsigned char* y, const void* value) const {
  const Axis& a = axes_.back();
  // [lo, hi): the units read from the input's own run (none when the pads crop it away).
  const int64_t lo = std::clamp<int64_t>(a.begin, 0, a.out), hi = std::clamp<int64_t>(a.begin + a.in, lo, a.out);
  if (hi > lo) std::memcpy(y + lo * unit_, x + (lo - a.begin) * unit_, size_t((hi - lo) * unit_));
  auto pad_units = [&](int64_t from, int64_t to) {
    if (from >= to) return;
    if (a.steps[size_t(from)].act == Act::fill) {  // constant mode: every pad unit of a row is the value
      fill(y + from * unit_, (to - from) * unit_, value);
      return;
    }
    auto unit_copy = [&](auto copy) {
      for (int64_t o = from; o < to; ++o) copy(y + o * unit_, x + a.steps[size_t(o)].src * unit_);
    };
    switch (unit_) {
      case 1: return unit_copy(copy_fixed<1>);
      case 2: return unit_copy(copy_fixed<2>);
      case 4: return unit_copy(copy_fixed<4>);
      case 8: return unit_copy(copy_fixed<8>);
      default:
        return unit_copy([&](unsigned char* d, const unsigned char* s) { std::memcpy(d, s, size_t(unit_)); });
    }
  };
  pad_units(0, lo);
  pad_units(hi, a.out);
}

void PadRows::walk(int level, const unsigned char* x, unsigned char* y, const void* value) const {
  if (level == int(axes_.size()) - 1) return write_row(x, y, value);
  const Axis& a = axes_[size_t(level)];
  bool copies = false;
  for (int64_t o = 0; o < a.out; ++o) {
    const Step& st = a.steps[size_t(o)];
    if (st.act == Act::fill) fill(y + o * a.out_stride, a.out_stride, value);
    else if (st.act == Act::walk) walk(level + 1, x + st.src * a.in_stride, y + o * a.out_stride, value);
    else copies = true;
  }
  if (!copies) return;
  for (int64_t o = 0; o < a.out; ++o) {
    const Step& st = a.steps[size_t(o)];
    if (st.act == Act::copy) std::memcpy(y + o * a.out_stride, y + st.home * a.out_stride, size_t(a.out_stride));
  }
}

void PadRows::run_task(const Task& t, const unsigned char* x, unsigned char* y, const void* value) const {
  switch (t.act) {
    case Act::fill: return fill(y + t.out_off, task_bytes_, value);
    case Act::copy: std::memcpy(y + t.out_off, y + t.src_off, size_t(task_bytes_)); return;
    case Act::walk: return walk(split_, x + t.in_off, y + t.out_off, value);
  }
}

void PadRows::run(const void* xv, void* yv, const void* value, pthreadpool_t pool) const {
  if (empty_) return;
  const auto* x = static_cast<const unsigned char*>(xv);
  auto* y = static_cast<unsigned char*>(yv);
  if (tasks_.size() <= 1 || pool == nullptr || pthreadpool_get_threads_count(pool) <= 1) {
    for (const Task& t : tasks_) run_task(t, x, y, value);
    return;
  }
  struct Context {
    const PadRows* self;
    const Task* tasks;
    const unsigned char* x;
    unsigned char* y;
    const void* value;
  };
  size_t begin = 0;
  for (size_t end : phase_end_) {
    if (end > begin) {
      Context ctx{this, tasks_.data() + begin, x, y, value};
      pthreadpool_parallelize_1d(
          pool,
          [](void* p, size_t i) {
            auto* c = static_cast<Context*>(p);
            c->self->run_task(c->tasks[i], c->x, c->y, c->value);
          },
          &ctx, end - begin, 0);
    }
    begin = end;
  }
}

}  // namespace octet::kernels
