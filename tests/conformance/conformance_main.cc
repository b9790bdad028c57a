// Runs the ONNX backend conformance cases (Debian's libonnx-testdata) through octet::Session
// and compares every output the way ONNX's own runner does: |actual - expected| <=
// atol + rtol * |expected| with rtol 1e-3, atol 1e-7; integers exact; NaN matches NaN.
//
// usage: octet_conformance [--filter REGEX] [--verbose] [--expect FILE | --write-expect FILE] [DATA_ROOT]
// Exit: 0 all ran cases passed, 1 some failed, 77 (ctest's skip) when DATA_ROOT is absent.
//
// --expect FILE (what ctest runs, with tests/conformance/expected.txt): every case must end as
// the file says, "pass CASE" or "skip CASE  # reason": a case that starts answering "not
// supported" fails the run instead of quietly becoming a skip, and one that starts passing fails
// it too until the list says so. The pass count and the skipped cases change only by a reviewed
// diff of that file; --write-expect FILE writes it from this run. "differ CASE  # reason": a case
// whose expected output ONNX Runtime does not reproduce either (ORT lists it as broken), where
// octet gives ORT's answer (kOrtDisagrees): it must run and differ from ONNX's data.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"

namespace fs = std::filesystem;
using octet::ir::DType;
using octet::ir::TensorData;

namespace {

constexpr const char* kDefaultRoot = "/usr/share/libonnx-testdata/data";
// real/ holds large models that need downloads; the rest are self-contained.
constexpr const char* kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
constexpr double kRtol = 1e-3, kAtol = 1e-7;

enum class Status { passed, failed, skipped, differs };

// Cases whose expected outputs ONNX Runtime's CPU kernels do not reproduce (its own test list
// marks them broken), and why: octet follows ORT there, checked by the sweep and parity tests.
const std::map<std::string, std::string> kOrtDisagrees = {
    {"node/test_resize_downsample_scales_cubic_align_corners",
     "ONNX's reference maps align_corners over scale * in, ONNX Runtime (and octet) over the truncated output size"},
    {"node/test_resize_downsample_scales_linear_align_corners",
     "ONNX's reference maps align_corners over scale * in, ONNX Runtime (and octet) over the truncated output size"},
    {"node/test_maxunpool_export_with_output_shape",
     "ONNX's reference moves each index to the same coordinates of the larger output_shape, ONNX Runtime (and octet) "
     "scatter at the same flat positions"},
};

struct Outcome {
  Status status = Status::passed;
  std::string reason;
  double max_error = 0;  // largest |actual - expected| over the compared outputs
};

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The message without the model path and node name, so that cases rejected for the same
// reason group together: "<path>: node 'n' (Conv, opset 11): X must..." -> "Conv: X must...".
std::string reason_of(const std::string& what, const fs::path& model) {
  std::string s = first_line(what);
  const std::string prefix = model.string() + ": ";
  if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  static const std::regex node(R"(^node '[^']*' \(([A-Za-z0-9_]+)(, opset \d+)?\)(, opset \d+)?: )");
  s = std::regex_replace(s, node, "$1: ");
  static const std::regex dims(R"(\[[-0-9N,]*\])");
  return std::regex_replace(s, dims, "[..]");
}

// Only an explicit "octet cannot do this" counts as a skip; anything else is a bug to chase.
bool says_unsupported(const std::string& msg) {
  return msg.find("not supported") != std::string::npos || msg.find("does not support") != std::string::npos ||
         msg.find("is not a tensor") != std::string::npos ||  // sequence / map / optional inputs
         // Every node of such a model is in another domain (e.g. ai.onnx.preview.training).
         msg.find("imports no default ONNX opset") != std::string::npos;
}

double element(const TensorData& t, int64_t i) {
  switch (t.dtype) {
    case DType::f32: return t.as<float>()[i];
    case DType::f64: return t.as<double>()[i];
    case DType::u8: return t.as<uint8_t>()[i];
    case DType::s8: return t.as<int8_t>()[i];
    case DType::s32: return t.as<int32_t>()[i];
    case DType::s64: return double(t.as<int64_t>()[i]);
    case DType::b8: return t.as<uint8_t>()[i] != 0;
  }
  return 0;
}

bool is_float(DType t) { return t == DType::f32 || t == DType::f64; }

// Empty when `actual` matches `expected`; otherwise why not. Tracks the largest error.
std::string compare(const TensorData& actual, const TensorData& expected, double& max_error) {
  if (actual.dtype != expected.dtype)
    return std::string("dtype ") + octet::ir::dtype_name(actual.dtype) + ", expected " +
           octet::ir::dtype_name(expected.dtype);
  if (actual.dims != expected.dims)
    return "shape " + octet::ir::dims_str(actual.dims) + ", expected " + octet::ir::dims_str(expected.dims);
  const size_t size = octet::ir::dtype_size(expected.dtype);
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < expected.count(); ++i) {
    const double a = element(actual, i), e = element(expected, i);
    bool ok;
    if (expected.dtype == DType::b8) {
      ok = (a != 0) == (e != 0);
    } else if (!is_float(expected.dtype)) {
      // Integers exactly, by their bytes: int64 does not fit a double.
      ok = std::memcmp(actual.bytes.data() + size_t(i) * size, expected.bytes.data() + size_t(i) * size, size) == 0;
    } else {
      ok = (std::isnan(a) && std::isnan(e)) || a == e ||  // a == e: matching infinities too
           std::fabs(a - e) <= kAtol + kRtol * std::fabs(e);
    }
    if (std::isnan(a) != std::isnan(e)) max_error = INFINITY;
    else if (a != e && !std::isnan(a)) max_error = std::max(max_error, std::fabs(a - e));
    if (!ok && bad++ == 0) first_bad = i;
  }
  if (bad == 0) return {};
  char buf[160];
  std::snprintf(buf, sizeof buf, "%lld of %lld values differ (first at flat index %lld: got %.9g, expected %.9g)",
                (long long)bad, (long long)expected.count(), (long long)first_bad, element(actual, first_bad),
                element(expected, first_bad));
  return buf;
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& stem) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (stem + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) return files;
    files.push_back(p);
  }
}

Outcome run_case(const fs::path& dir) {
  const fs::path model = dir / "model.onnx";
  Outcome o;
  auto fail = [&](std::string why) {
    o.status = Status::failed;
    o.reason = std::move(why);
    return o;
  };
  std::optional<octet::Session> session;
  try {
    session.emplace(octet::Session::load(model.string()));
  } catch (const octet::ir::Error& e) {
    if (!says_unsupported(e.what())) return fail("load: " + reason_of(e.what(), model));
    o.status = Status::skipped;
    o.reason = reason_of(e.what(), model);
    return o;
  } catch (const std::exception& e) {
    return fail(std::string("load threw a non-ir::Error: ") + first_line(e.what()));
  }

  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return fail("no test_data_set_* directory");

  for (const auto& set : sets) {
    const std::string where = set.filename().string() + ": ";
    std::vector<TensorData> inputs, expected;
    try {
      for (const auto& p : numbered(set, "input")) inputs.push_back(octet::loader::load_tensor_pb(p.string()));
      for (const auto& p : numbered(set, "output")) expected.push_back(octet::loader::load_tensor_pb(p.string()));
    } catch (const octet::ir::Error& e) {
      if (!says_unsupported(e.what())) return fail(where + "test data: " + first_line(e.what()));
      o.status = Status::skipped;
      o.reason = "test data: " + reason_of(e.what(), "");
      return o;
    }
    if (inputs.size() != session->inputs().size())
      return fail(where + std::to_string(inputs.size()) + " input files, the model takes " +
                  std::to_string(session->inputs().size()));
    std::vector<TensorData> actual;
    try {
      actual = session->run(inputs);
    } catch (const octet::ir::Error& e) {
      if (!says_unsupported(e.what())) return fail(where + "run: " + reason_of(e.what(), model));
      o.status = Status::skipped;
      o.reason = "at run time: " + reason_of(e.what(), model);
      return o;
    } catch (const std::exception& e) {
      return fail(where + "run threw a non-ir::Error: " + first_line(e.what()));
    }
    if (actual.size() != expected.size())
      return fail(where + std::to_string(actual.size()) + " outputs, expected " + std::to_string(expected.size()));
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string why = compare(actual[i], expected[i], o.max_error);
      if (why.empty()) continue;
      const auto known = kOrtDisagrees.find(fs::relative(dir, dir.parent_path().parent_path()).generic_string());
      if (known != kOrtDisagrees.end()) {
        o.status = Status::differs;
        o.reason = known->second;
        return o;
      }
      return fail(where + "output " + std::to_string(i) + " ('" + session->outputs()[i].name + "'): " + why);
    }
  }
  return o;
}

int usage() {
  std::fprintf(stderr,
               "usage: octet_conformance [--filter REGEX] [--verbose] [--expect FILE | --write-expect FILE] "
               "[DATA_ROOT]\n");
  return 2;
}

// "pass CASE" / "skip CASE  # reason" lines; '#' starts a comment, blank lines are ignored.
std::map<std::string, Status> read_expected(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::map<std::string, Status> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string status, name, extra;
    if (!(words >> status)) continue;
    if (!(words >> name) || (words >> extra) || (status != "pass" && status != "skip" && status != "differ") ||
        out.count(name))
      throw std::runtime_error(file.string() + ":" + std::to_string(n) +
                               ": expected 'pass CASE', 'skip CASE' or 'differ CASE', once per case");
    out[name] = status == "pass" ? Status::passed : status == "skip" ? Status::skipped : Status::differs;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root = kDefaultRoot;
  std::optional<std::regex> filter;
  bool verbose = false;
  fs::path expect_file, write_file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) {
      try {
        filter.emplace(argv[++i]);
      } catch (const std::regex_error& e) {
        std::fprintf(stderr, "octet_conformance: bad --filter regex: %s\n", e.what());
        return 2;
      }
    } else if (a == "--verbose" || a == "-v") {
      verbose = true;
    } else if ((a == "--expect" || a == "--write-expect") && i + 1 < argc) {
      (a == "--expect" ? expect_file : write_file) = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return usage();
    } else {
      root = a;
    }
  }
  if (!fs::is_directory(root)) {
    std::printf("octet_conformance: SKIP: no ONNX test data at %s (install Debian's libonnx-testdata, "
                "or pass the data directory)\n", root.c_str());
    return 77;
  }

  std::vector<std::string> cases;  // "node/test_abs", relative to root
  for (const char* suite : kSuites) {
    if (!fs::is_directory(root / suite)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / suite))
      if (entry.is_regular_file() && entry.path().filename() == "model.onnx")
        cases.push_back(fs::relative(entry.path().parent_path(), root).generic_string());
  }
  std::sort(cases.begin(), cases.end());

  if (!expect_file.empty() && !write_file.empty()) return usage();
  std::map<std::string, Status> expected;
  if (!expect_file.empty()) {
    try {
      expected = read_expected(expect_file);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "octet_conformance: %s\n", e.what());
      return 2;
    }
  }

  int passed = 0, failed = 0, skipped = 0, differ = 0;
  std::map<std::string, std::vector<std::string>> skips;  // reason -> cases
  std::map<std::string, Outcome> outcomes;
  for (const auto& name : cases) {
    if (filter && !std::regex_search(name, *filter)) continue;
    Outcome o = run_case(root / name);
    outcomes[name] = o;
    switch (o.status) {
      case Status::passed:
        ++passed;
        if (verbose) std::printf("PASS %s (max error %.3g)\n", name.c_str(), o.max_error);
        break;
      case Status::failed:
        ++failed;
        std::printf("FAIL %s: %s (max error %.3g)\n", name.c_str(), o.reason.c_str(), o.max_error);
        break;
      case Status::skipped:
        ++skipped;
        skips[o.reason].push_back(name);
        if (verbose) std::printf("SKIP %s: %s\n", name.c_str(), o.reason.c_str());
        break;
      case Status::differs:
        ++differ;
        if (verbose) std::printf("DIFFER %s: %s\n", name.c_str(), o.reason.c_str());
        break;
    }
    std::fflush(stdout);
  }

  if (!skips.empty()) {
    std::printf("\nskipped as unsupported, by reason:\n");
    for (const auto& [reason, names] : skips) {
      std::printf("  [%zu] %s\n     ", names.size(), reason.c_str());
      for (size_t i = 0; i < names.size(); ++i) std::printf("%s%s", i ? ", " : "", names[i].c_str());
      std::printf("\n");
    }
  }
  std::printf("\nconformance: %d passed, %d failed, %d skipped as unsupported, %d differ as ONNX Runtime does (of %d)\n",
              passed, failed, skipped, differ, passed + failed + skipped + differ);

  if (!write_file.empty()) {
    std::ofstream out(write_file);
    out << "# The ONNX backend conformance cases (Debian's libonnx-testdata) and how octet must end each:\n"
           "# tests/conformance/conformance_main.cc --expect. Written by --write-expect; a change is a\n"
           "# reviewed diff. " << passed << " pass, " << skipped << " skip as unsupported, " << differ
        << " differ from ONNX's data as ONNX Runtime does.\n";
    for (const auto& [name, o] : outcomes) {
      if (o.status == Status::passed) out << "pass " << name << "\n";
      if (o.status == Status::skipped) out << "skip " << name << "  # " << o.reason << "\n";
      if (o.status == Status::differs) out << "differ " << name << "  # " << o.reason << "\n";
    }
    if (!out) {
      std::fprintf(stderr, "octet_conformance: cannot write %s\n", write_file.c_str());
      return 2;
    }
  }
  int changed = 0;
  if (!expect_file.empty()) {
    auto word = [](Status s) {
      return s == Status::passed ? "pass" : s == Status::skipped ? "skip" : s == Status::differs ? "differ" : "fail";
    };
    int want_pass = 0;
    for (const auto& [name, status] : expected) {
      want_pass += status == Status::passed;
      auto it = outcomes.find(name);
      if (it == outcomes.end()) {
        if (filter && !std::regex_search(name, *filter)) continue;
        std::printf("CHANGED %s: expected %s, the case is not in %s\n", name.c_str(), word(status), root.c_str());
        ++changed;
      } else if (it->second.status != status && it->second.status != Status::failed) {
        std::printf("CHANGED %s: expected %s, got %s%s%s\n", name.c_str(), word(status), word(it->second.status),
                    it->second.reason.empty() ? "" : ": ", it->second.reason.c_str());
        ++changed;
      }
    }
    for (const auto& [name, o] : outcomes)
      if (!expected.count(name)) {
        std::printf("CHANGED %s: a case %s does not list (got %s)\n", name.c_str(), expect_file.c_str(), word(o.status));
        ++changed;
      }
    std::printf("expected (%s): %d pass; %d cases ended otherwise%s\n", expect_file.c_str(), want_pass, changed,
                changed ? " - update the list with --write-expect if that is intended, and review its diff" : "");
  }
  return failed || changed ? 1 : 0;
}
