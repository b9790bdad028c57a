// The sweep runner: every case of tests/sweep/sweep_cases.cc (or the CI subset) through octet and
// ONNX Runtime, each ending pass / scalar / refused / mismatch, checked against the reviewed
// outcomes in tests/sweep/expected.txt.
//
//   octet_sweep [--subset ci|full] [--per-stratum N] [--expect FILE] [--write-expect FILE] [--filter TEXT]
//               [--jobs N] [-v] [--list]
//
// The CI subset takes at most N cases (default 5) of each op and mode, spread over its list.
//
//   pass      octet's outputs agree with ORT's (FP32 and dynamic INT8: max|diff| <= 1e-5 max|ORT|;
//             static INT8 QDQ: bit-exact) and, when the CPU has a SIMD level, no step of the plan
//             runs a scalar __ref kernel
//   scalar    they agree, but a step runs the scalar reference kernel (named in the reason)
//   refused   octet rejects the model (the loader or the planner's message)
//   mismatch  the outputs differ, or ONNX Runtime fails on the model
//
// With --expect, a case whose outcome differs from its line (or that has none) is a failure, and
// so is a line naming no case. --write-expect FILE rewrites the outcomes of the cases run (the
// others are kept, lines of cases that no longer exist dropped). Prints a summary per op; exits 1
// on a failure, 77 when ONNX Runtime is unavailable.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <stdlib.h>  // mkdtemp

#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/sweep/sweep_cases.h"
#include "tests/util/ort_oracle.h"
#include "io/tensor_io.h"

namespace octet::sweep {
namespace runner {

namespace fs = std::filesystem;

struct Outcome {
  std::string status, reason;
};

uint32_t seed_of(const std::string& id) {
  uint32_t h = 2166136261u;
  for (char c : id) h = (h ^ uint8_t(c)) * 16777619u;
  return h;
}

std::string one_line(std::string s, const std::string& path) {
  for (size_t p; (p = s.find(path)) != std::string::npos;) s.replace(p, path.size(), "model.onnx");
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

double element(const ir::TensorData& t, int64_t i) {
  switch (t.dtype) {
    case ir::DType::f32: return t.as<float>()[i];
    case ir::DType::u8: return t.as<uint8_t>()[i];
    case ir::DType::s8: return t.as<int8_t>()[i];
    case ir::DType::s32: return t.as<int32_t>()[i];
    case ir::DType::s64: return double(t.as<int64_t>()[i]);
    case ir::DType::f64: return t.as<double>()[i];
    case ir::DType::b8: return t.as<uint8_t>()[i] != 0;  // one byte per bool
  }
  throw std::invalid_argument(std::string("sweep: no comparison for dtype ") + ir::dtype_name(t.dtype));
}

std::string fmt(double v) {
  std::ostringstream o;
  o.precision(3);
  o << v;
  return o.str();
}

Outcome run_case(const Case& c, const fs::path& dir) {
  std::string file = c.id;
  std::replace(file.begin(), file.end(), '/', '_');
  const std::string path = (dir / (file + ".onnx")).string();
  {
    testing::OnnxBuilder b(c.opset, "sweep", seed_of(c.id));
    c.build(b);
    b.save(path);
  }
  std::optional<Session> session;
  std::vector<ir::TensorData> inputs;
  std::vector<ir::TensorData> got;
  std::string scalar_steps;
  try {
    SessionOptions o;
    o.batch_slice = 0;
    session.emplace(Session::load(path, o));
    std::mt19937 rng(seed_of(c.id));
    for (const TensorSpec& in : session->inputs()) {
      const bool divisor = c.id.rfind("fp32/Div/", 0) == 0 && in.name == "b";
      std::uniform_real_distribution<float> u(divisor ? 0.5f : -2.0f, 2.0f);
      std::vector<float> v(size_t(ir::element_count(in.dims)));
      for (float& x : v) x = u(rng);
      inputs.push_back(ir::TensorData::f32(in.dims, v));
    }
    got = session->run(inputs);
    if (kernels::active_isa() != kernels::Isa::scalar && !c.scalar_ok)
      for (const PlanStep& s : session->plan_for(inputs).steps())
        if (s.scalar()) scalar_steps += (scalar_steps.empty() ? "" : ", ") + s.op + ": " + s.kernel +
                                        (s.fallback.empty() ? "" : " (" + s.fallback + ")");
  } catch (const std::exception& e) {
    return {"refused", one_line(e.what(), path)};
  }
  std::map<std::string, npy::Array> ort_in;
  for (size_t i = 0; i < inputs.size(); ++i) ort_in[session->inputs()[i].name] = to_npy(inputs[i]);
  std::map<std::string, npy::Array> want;
  try {
    want = testing::run_ort(path, ort_in);
  } catch (const std::exception& e) {
    return {"mismatch", "ONNX Runtime fails: " + one_line(e.what(), path)};
  }
  for (size_t o = 0; o < got.size(); ++o) {
    const std::string& name = session->outputs()[o].name;
    auto it = want.find(name);
    if (it == want.end()) return {"mismatch", "ONNX Runtime has no output " + name};
    const ir::TensorData ref = from_npy(it->second);
    if (ref.dims != got[o].dims)
      return {"mismatch", name + ": shape " + ir::dims_str(got[o].dims) + ", ORT " + ir::dims_str(ref.dims)};
    double max_diff = 0, max_ref = 0;
    int64_t differ = 0;
    const int64_t n = ir::element_count(ref.dims);
    for (int64_t i = 0; i < n; ++i) {
      const double a = element(got[o], i), r = element(ref, i);
      const double d = std::isnan(a) != std::isnan(r) ? INFINITY : std::isnan(a) ? 0 : std::fabs(a - r);
      max_diff = std::max(max_diff, d);
      if (!std::isnan(r)) max_ref = std::max(max_ref, std::fabs(r));
      differ += d != 0;
    }
    if (c.mode == Mode::qdq ? differ != 0 : max_diff > 1e-5 * max_ref)
      return {"mismatch", name + ": " + std::to_string(differ) + " of " + std::to_string(n) + " differ, max|diff| " +
                              fmt(max_diff) + ", max|ORT| " + fmt(max_ref)};
  }
  if (!scalar_steps.empty()) return {"scalar", one_line(scalar_steps, path)};
  return {"pass", ""};
}

struct Expected {
  std::string status, reason;
};

std::map<std::string, Expected> read_expect(const std::string& path, bool& ok) {
  std::map<std::string, Expected> m;
  std::ifstream in(path);
  ok = bool(in);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Expected e;
    std::string id;
    s >> e.status >> id;
    const size_t hash = line.find("  # ");
    if (hash != std::string::npos) e.reason = line.substr(hash + 4);
    m[id] = e;
  }
  return m;
}

int main(int argc, char** argv) {
  std::string subset = "full", expect, write_expect, filter;
  int jobs = 1, per_stratum = 5;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--subset") subset = next();
    else if (a == "--expect") expect = next();
    else if (a == "--write-expect") write_expect = next();
    else if (a == "--filter") filter = next();
    else if (a == "--jobs") jobs = std::max(1, std::stoi(next()));
    else if (a == "--per-stratum") per_stratum = std::max(2, std::stoi(next()));
    else if (a == "-v") verbose = true;
    else if (a == "--list") {
      for (const Case& c : all_cases()) std::cout << c.id << "\n";
      return 0;
    } else {
      std::cerr << "usage: octet_sweep [--subset ci|full] [--per-stratum N] [--expect FILE] [--write-expect FILE] [--filter TEXT] "
                   "[--jobs N] [-v] [--list]\n";
      return 2;
    }
  }
  if (std::string why = testing::ort_unavailable_reason(); !why.empty()) {
    std::cerr << "octet_sweep: skipped: " << why << "\n";
    return 77;
  }
  std::vector<const Case*> cases;
  if (subset == "ci") cases = ci_subset(size_t(per_stratum));
  else for (const Case& c : all_cases()) cases.push_back(&c);
  if (!filter.empty())
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const Case* c) { return c->id.find(filter) == std::string::npos; }),
                cases.end());

  std::string tmpl = (fs::temp_directory_path() / "octet-sweep-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::cerr << "octet_sweep: cannot create a temporary folder\n";
    return 1;
  }
  const fs::path dir = tmpl;
  std::vector<Outcome> outcomes(cases.size());
  std::atomic<size_t> next{0};
  std::mutex print;
  auto work = [&] {
    for (size_t i; (i = next++) < cases.size();) {
      try {
        outcomes[i] = run_case(*cases[i], dir);
      } catch (const std::exception& e) {
        outcomes[i] = {"mismatch", std::string("the sweep itself failed: ") + e.what()};
      }
      if (verbose) {
        std::lock_guard<std::mutex> lock(print);
        std::cout << outcomes[i].status << " " << cases[i]->id
                  << (outcomes[i].reason.empty() ? "" : "  # " + outcomes[i].reason) << std::endl;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int j = 0; j < jobs; ++j) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  std::error_code ec;
  fs::remove_all(dir, ec);

  // Against the reviewed outcomes.
  int failures = 0;
  std::map<std::string, Expected> expected;
  if (!expect.empty()) {
    bool ok = false;
    expected = read_expect(expect, ok);
    if (!ok) {
      std::cerr << "cannot read " << expect << "\n";
      return 1;
    }
    std::set<std::string> known;
    for (const Case& c : all_cases()) known.insert(c.id);
    for (const auto& [id, e] : expected)
      if (!known.count(id)) {
        std::cout << "STALE   " << id << ": in " << expect << " but no such case (rewrite with --write-expect)\n";
        ++failures;
      }
  }
  struct Row {
    int cases = 0, pass = 0, scalar = 0, refused = 0, mismatch = 0, unexpected = 0;
  };
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string st = stratum_of(cases[i]->id);
    if (!rows.count(st)) order.push_back(st);
    Row& r = rows[st];
    ++r.cases;
    const Outcome& o = outcomes[i];
    (o.status == "pass" ? r.pass : o.status == "scalar" ? r.scalar : o.status == "refused" ? r.refused : r.mismatch)++;
    if (!expect.empty()) {
      auto it = expected.find(cases[i]->id);
      // Without a SIMD level there is no scalar gap to see: an expected "scalar" passes.
      const bool no_simd = kernels::active_isa() == kernels::Isa::scalar;
      if (it == expected.end() ||
          (it->second.status != o.status && !(no_simd && it->second.status == "scalar" && o.status == "pass"))) {
        ++r.unexpected;
        ++failures;
        std::cout << "UNEXPECTED " << cases[i]->id << ": " << o.status << (o.reason.empty() ? "" : " (" + o.reason + ")")
                  << ", expected "
                  << (it == expected.end() ? std::string("no line (add it: --write-expect)") : it->second.status)
                  << "\n";
      }
    }
  }
  std::cout << "\n" << std::left;
  auto line = [](const std::string& a, auto... v) {
    std::cout.width(28);
    std::cout << a;
    ((std::cout.width(10), std::cout << v), ...);
    std::cout << "\n";
  };
  line("op", "cases", "pass", "scalar", "refused", "mismatch", "unexpected");
  Row total;
  for (const auto& st : order) {
    const Row& r = rows[st];
    line(st, r.cases, r.pass, r.scalar, r.refused, r.mismatch, r.unexpected);
    total.cases += r.cases, total.pass += r.pass, total.scalar += r.scalar, total.refused += r.refused;
    total.mismatch += r.mismatch, total.unexpected += r.unexpected;
  }
  line("total", total.cases, total.pass, total.scalar, total.refused, total.mismatch, total.unexpected);
  std::cout << "ISA " << kernels::isa_name(kernels::active_isa()) << ", ONNX Runtime " << testing::ort_version() << "\n";

  if (!write_expect.empty()) {
    bool ok = false;
    auto all = read_expect(write_expect, ok);
    for (size_t i = 0; i < cases.size(); ++i) all[cases[i]->id] = {outcomes[i].status, outcomes[i].reason};
    std::ofstream out(write_expect);
    out << "# The sweep's cases (tests/sweep/sweep_cases.cc) and how each must end: pass, scalar (a __ref step at\n"
           "# avx2 and above), refused (octet rejects it, with its message), mismatch (differs from ONNX Runtime).\n"
           "# Written by octet_sweep --write-expect (tools/sweep.sh --write); a change is a reviewed diff.\n";
    for (const Case& c : all_cases()) {
      auto it = all.find(c.id);
      if (it == all.end()) continue;
      out << it->second.status << " " << c.id << (it->second.reason.empty() ? "" : "  # " + it->second.reason) << "\n";
    }
    std::cout << "wrote " << write_expect << "\n";
  }
  if (failures) std::cout << failures << " unexpected outcome(s)\n";
  return failures ? 1 : 0;
}

}  // namespace runner
}  // namespace octet::sweep

int main(int argc, char** argv) {
  try {
    return octet::sweep::runner::main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "octet_sweep: " << e.what() << "\n";
    return 2;
  }
}
