#include "tests/parity/parity_harness.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "engine/session.h"
#include "io/tensor_io.h"
#include "kernels/isa.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/ort_oracle.h"

#ifndef OCTET_SOURCE_DIR
#error "OCTET_SOURCE_DIR must be defined (tests/CMakeLists.txt does it)"
#endif

namespace octet::parity {

namespace fs = std::filesystem;

void Figures::merge(const Figures& o) {
  max_abs_diff = std::max(max_abs_diff, o.max_abs_diff);
  max_abs_ref = std::max(max_abs_ref, o.max_abs_ref);
  top1_agree += o.top1_agree;
  top1_rows += o.top1_rows;
  if (!o.shape_ok) {
    shape_ok = false;
    shape_note = o.shape_note;
  }
}

std::vector<int64_t> argmax_rows(const float* data, int64_t rows, int64_t cols) {
  std::vector<int64_t> out(size_t(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = data + r * cols;
    out[size_t(r)] = int64_t(std::max_element(row, row + cols) - row);
  }
  return out;
}

Figures compare(const ir::TensorData& octet, const npy::Array& ort) {
  Figures f;
  if (octet.dtype != ir::DType::f32 || ort.dtype != npy::DType::f32) {
    f.shape_ok = false;
    f.shape_note = std::string("dtype: octet ") + ir::dtype_name(octet.dtype) + ", ORT " + npy::dtype_name(ort.dtype);
    return f;
  }
  if (octet.dims != ort.shape) {
    f.shape_ok = false;
    f.shape_note = "shape: octet " + ir::dims_str(octet.dims) + ", ORT " + ir::dims_str(ort.shape);
    return f;
  }
  const float* a = octet.as<float>();
  const float* b = ort.as<float>();
  const int64_t n = ort.count();
  for (int64_t i = 0; i < n; ++i) {
    // A NaN on either side counts as an infinite difference.
    const double d = std::fabs(double(a[i]) - double(b[i]));
    f.max_abs_diff = std::isnan(d) ? INFINITY : std::max(f.max_abs_diff, d);
    f.max_abs_ref = std::max(f.max_abs_ref, std::fabs(double(b[i])));
  }
  if (ort.shape.size() == 2 && ort.shape[1] > 1) {
    const auto ta = argmax_rows(a, ort.shape[0], ort.shape[1]);
    const auto tb = argmax_rows(b, ort.shape[0], ort.shape[1]);
    f.top1_rows = ort.shape[0];
    for (size_t r = 0; r < ta.size(); ++r) f.top1_agree += ta[r] == tb[r];
  }
  return f;
}

std::string describe(const Figures& f) {
  if (!f.shape_ok) return "MISMATCH " + f.shape_note;
  char buf[200];
  std::snprintf(buf, sizeof buf, "max|diff| %.3g  max|ORT| %.4g  ratio %.3g", f.max_abs_diff, f.max_abs_ref,
                f.ratio());
  std::string s = buf;
  if (f.top1_rows > 0) s += "  top-1 " + std::to_string(f.top1_agree) + "/" + std::to_string(f.top1_rows);
  return s;
}

std::map<std::string, npy::Array> save_and_run_ort(const testing::OnnxBuilder& b, const std::string& path,
                                                   const std::map<std::string, ir::TensorData>& in) {
  b.save(path);
  std::map<std::string, npy::Array> ort_in;
  for (const auto& [k, v] : in) ort_in[k] = to_npy(v);
  return testing::run_ort(path, ort_in);
}

void expect_ort_bytes_at_every_level(const testing::OnnxBuilder& b, const std::string& name,
                                     const std::map<std::string, ir::TensorData>& in) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  const auto theirs = save_and_run_ort(b, path, in);
  for (kernels::Isa isa : kernels::runnable_isas())
    for (int threads : {1, 2}) {
      SessionOptions o;
      o.isa = isa;
      o.threads = threads;
      Session session = Session::load(path, o);
      std::vector<ir::TensorData> inputs;
      for (const auto& spec : session.inputs()) inputs.push_back(in.at(spec.name));
      const auto mine = session.run(inputs);
      ASSERT_EQ(mine.size(), theirs.size());
      for (size_t k = 0; k < mine.size(); ++k) {
        const std::string& out = session.outputs()[k].name;
        const npy::Array& ref = theirs.at(out);
        EXPECT_EQ(mine[k].dims, ref.shape) << name << " output " << out;
        ASSERT_EQ(mine[k].bytes.size(), ref.data.size()) << out;
        EXPECT_EQ(differing_bytes(mine[k], ref), 0)
            << name << " output " << out << " at " << kernels::isa_name(isa) << ", " << threads << " threads";
      }
    }
}

void expect_no_scalar_step_at_simd_levels(const testing::OnnxBuilder& b, const std::string& name,
                                          const std::vector<ir::Dims>& input_dims, const std::set<std::string>& ops) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  b.save(path);
  for (kernels::Isa isa : kernels::runnable_isas()) {
    if (isa == kernels::Isa::scalar) continue;
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    for (const PlanStep& s : session.plan_for(input_dims).steps()) {
      if (!ops.empty() && !ops.count(s.op)) continue;
      EXPECT_FALSE(s.scalar()) << name << ": " << s.node << " runs " << s.kernel << " (" << s.fallback << ") at "
                               << kernels::isa_name(isa);
    }
  }
}

namespace {
std::mutex lines_mutex;
std::vector<Line>& lines() {
  static std::vector<Line> v;
  return v;
}
}  // namespace

void report(const Line& line) {
  std::cout << "[ PARITY   ] " << line.model << " batch " << line.batch << " " << line.output << ": "
            << describe(line.figures) << (line.figures.within_tolerance() && line.figures.top1_identical() ? "" : "  FAIL")
            << std::endl;
  std::lock_guard<std::mutex> lock(lines_mutex);
  lines().push_back(line);
}

const std::vector<Line>& reported() { return lines(); }

int64_t differing_bytes(const ir::TensorData& mine, const npy::Array& theirs) {
  EXPECT_EQ(mine.bytes.size(), theirs.data.size()) << "output sizes differ";
  const size_t n = std::min(mine.bytes.size(), theirs.data.size());
  int64_t differ = int64_t(std::max(mine.bytes.size(), theirs.data.size()) - n);
  for (size_t i = 0; i < n; ++i) differ += mine.bytes[i] != theirs.data[i];
  return differ;
}

std::vector<ir::TensorData> random_inputs(const std::vector<ir::Dims>& input_dims, int64_t batch, uint32_t seed) {
  std::vector<ir::TensorData> out;
  for (size_t i = 0; i < input_dims.size(); ++i) {
    ir::Dims d = input_dims[i];
    for (auto& e : d) if (e < 0) e = batch;
    const auto values = testing::random_normal(size_t(ir::element_count(d)), seed + uint32_t(i) * 7919u);
    out.push_back(ir::TensorData::f32(d, values));
  }
  return out;
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  if (keep_) {
    std::cout << "[ PARITY   ] kept " << path_.string() << " for inspection" << std::endl;
    return;
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path shared_dir() { return fs::path(OCTET_SOURCE_DIR) / ".." / "shared"; }

int64_t env_limit(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n <= 0)
    throw std::invalid_argument(std::string(name) + "='" + v + "' is not a positive integer");
  return n;
}

}  // namespace octet::parity
