// `octet compare A B`: compare the .npy outputs of two runs (e.g. octet and ONNX Runtime).
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "apps/cli/commands.h"
#include "io/npy.h"

namespace octet::cli {
namespace {

struct CompareOptions {
  std::string a, b;
  double tolerance = 1e-4;
};

std::vector<double> as_doubles(const npy::Array& x, const std::string& path) {
  std::vector<double> v(static_cast<size_t>(x.count()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (x.dtype) {
      case npy::DType::f32: v[i] = x.as<float>()[i]; break;
      case npy::DType::f64: v[i] = x.as<double>()[i]; break;
      case npy::DType::u8: v[i] = x.as<uint8_t>()[i]; break;
      case npy::DType::s8: v[i] = x.as<int8_t>()[i]; break;
      case npy::DType::s32: v[i] = x.as<int32_t>()[i]; break;
      case npy::DType::s64: v[i] = double(x.as<int64_t>()[i]); break;
      case npy::DType::b8: v[i] = x.as<uint8_t>()[i]; break;
    }
  }
  return v;
}

int run_compare(const CompareOptions& o) {
  namespace fs = std::filesystem;
  int compared = 0, bad = 0;
  for (const auto& entry : fs::directory_iterator(o.a)) {
    if (entry.path().extension() != ".npy") continue;
    fs::path other = fs::path(o.b) / entry.path().filename();
    if (!fs::exists(other)) continue;
    npy::Array x = npy::read(entry.path().string()), y = npy::read(other.string());
    ++compared;
    if (x.shape != y.shape) {
      fmt::print("{}: shapes differ: {} vs {}\n", entry.path().filename().string(), npy::describe(x), npy::describe(y));
      ++bad;
      continue;
    }
    auto va = as_doubles(x, entry.path().string()), vb = as_doubles(y, other.string());
    // A NaN or infinity on either side is a failure of its own: std::max would let a NaN
    // difference vanish and report 0.
    int64_t non_finite_a = 0, non_finite_b = 0, first_bad = -1;
    for (size_t i = 0; i < va.size(); ++i) {
      const bool bad_a = !std::isfinite(va[i]), bad_b = !std::isfinite(vb[i]);
      non_finite_a += bad_a;
      non_finite_b += bad_b;
      if ((bad_a || bad_b) && first_bad < 0) first_bad = int64_t(i);
    }
    if (non_finite_a || non_finite_b) {
      fmt::print("{}: NaN or infinity: {} value(s) in {}, {} in {} (first at element {}: {} vs {})\n",
                 entry.path().filename().string(), non_finite_a, o.a, non_finite_b, o.b, first_bad, va[size_t(first_bad)],
                 vb[size_t(first_bad)]);
      ++bad;
      continue;
    }
    double max_diff = 0, max_ref = 0;
    for (size_t i = 0; i < va.size(); ++i) {
      max_diff = std::max(max_diff, std::abs(va[i] - vb[i]));
      max_ref = std::max(max_ref, std::abs(vb[i]));
    }
    double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
    std::string top1;
    if (x.shape.size() == 2 && x.shape[1] > 0) {
      int64_t rows = x.shape[0], cols = x.shape[1], agree = 0;
      for (int64_t r = 0; r < rows; ++r) {
        auto arg = [&](const std::vector<double>& v) {
          return std::max_element(v.begin() + r * cols, v.begin() + (r + 1) * cols) - (v.begin() + r * cols);
        };
        agree += arg(va) == arg(vb);
      }
      top1 = fmt::format(", top-1 agrees {}/{}", agree, rows);
      if (agree != rows) ++bad;
    }
    bool ok = rel <= o.tolerance;
    bad += !ok;
    fmt::print("{}: max |a-b| = {:.3g}, max |b| = {:.3g}, ratio {:.3g} ({} {:.0e}){}\n",
               entry.path().filename().string(), max_diff, max_ref, rel, ok ? "within" : "ABOVE", o.tolerance, top1);
  }
  if (compared == 0) throw std::runtime_error("no .npy file of " + o.a + " has a namesake in " + o.b);
  return bad ? 1 : 0;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd = app.add_subcommand("compare", "Compare the same-named .npy files of two folders (max difference, top-1)");
  cmd->add_option("a", o->a, "Folder of .npy outputs (e.g. octet's)")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("b", o->b, "Reference folder (e.g. ONNX Runtime's)")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--tolerance", o->tolerance, "Largest accepted max|a-b| / max|b| (default 1e-4)")
      ->check(non_negative());
  return [o, cmd]() -> int { return cmd->parsed() ? run_compare(*o) : -1; };
}

}  // namespace octet::cli
