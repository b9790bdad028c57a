// Writes docs/ops.md from the engine itself: the ops the loader reads (loader/importers.h), the
// ops the planner runs (engine/op_registry.h), the INT8 table (core/int8_ops.h), and the kernel
// each probe graph's step gets at each ISA level (tools/catalogue/probes.h).
//
//   octet_catalogue [-o FILE]          writes the catalogue (stdout without -o)
//   octet_catalogue --check FILE       exit 1 when FILE differs from what would be written
//   octet_catalogue --here             every level this CPU runs, probed (not the committed file)
//   octet_catalogue --probes-only      only the check that every registered op has a probe row that plans
//
// The committed file probes scalar and avx2 only, so it is the same on every x86-64 CPU with
// AVX2; exits 77 (skip) on a CPU without it. Exits 1 when a registered op has no probe row, or a
// probe does not plan the step it names.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/int8_ops.h"
#include "engine/op_registry.h"
#include "kernels/elementwise/activation_list.h"
#include "kernels/isa.h"
#include "loader/importers.h"
#include "tools/catalogue/probes.h"

namespace octet::catalogue {
namespace generator {

using kernels::Isa;

std::string value_str(const ir::AttrValue& v) {
  std::ostringstream o;
  if (auto* i = std::get_if<int64_t>(&v)) {
    if (*i == std::numeric_limits<int64_t>::min()) o << "absent";  // an optional attribute without default (importers.cc)
    else o << *i;
  }
  else if (auto* x = std::get_if<float>(&v)) {
    if (std::isinf(*x)) o << (*x < 0 ? "-inf" : "inf");
    else o << *x;
  } else if (auto* s = std::get_if<std::string>(&v)) o << *s;
  else if (auto* l = std::get_if<std::vector<int64_t>>(&v)) o << (l->empty() ? "[]" : ir::dims_str(*l));
  else if (std::get_if<std::vector<float>>(&v)) o << "[floats]";
  else o << "tensor";
  return o.str();
}

std::string attrs_str(const std::string& op) {
  const loader::ImportSchema* s = loader::import_schema(op);
  if (!s) return "";
  std::string r;
  for (const auto& a : s->attrs) {
    if (!r.empty()) r += ", ";
    r += "`" + a.name + (a.dflt ? "=" + value_str(*a.dflt) : " (required)") + "`";
  }
  return r.empty() ? "none" : r;
}

std::string domain_str(const std::string& op) {
  const int8::Int8Op* r = int8::find(op);
  return r && !r->domain.empty() ? r->domain : "";
}

// What a probe's step runs at one level.
enum class Kind { simd, scalar, generic, unnamed, none };

struct Cell {
  std::string text;
  Kind kind = Kind::none;
  std::string kernel;
};

Cell probe_cell(const Probe& p, Isa isa) {
  if (!p.no_step.empty()) return {"no step", Kind::none, ""};
  ProbeResult r = run_probe(p, isa);
  if (!r.planned) return {"**refused**", Kind::none, ""};
  if (!r.has_step) return {"(no step)", Kind::none, ""};
  if (r.kernel.empty()) return {"(op names no kernel)", Kind::unnamed, ""};
  if (r.scalar())
    return {"**`" + r.kernel + "`**" + (r.fallback.empty() ? "" : " (" + r.fallback + ")"), Kind::scalar, ""};
  // A kernel of a level says so (`__avx2`, `__avx512vnni`, ...); the others (copies, transposes)
  // are the same code at every level.
  const bool levelled = r.kernel.find("__") != std::string::npos;
  return {"`" + r.kernel + "`", levelled ? Kind::simd : Kind::generic, r.kernel};
}

std::string derived_x86(Kind at_avx2) {
  switch (at_avx2) {
    case Kind::simd: return "SIMD (derived: at least the avx2 kernel)";
    case Kind::generic: return "the same (no ISA-specific kernel)";
    case Kind::scalar: return "not probed (`__ref` at avx2)";
    default: return "not probed";
  }
}

// ---- Arm levels, derived from the kernel lists ----
// The x86 build has no Arm kernels to plan with, so an Arm cell says which Arm levels have rows in
// the list (or ISA files) of the family the avx2 kernel belongs to: where the x86 step is SIMD,
// the same family's Arm row is what the planner would reach for. Read from the source tree.
struct Family {
  const char* prefix;    // of an avx2 kernel name
  // a list file (its OCTET_ARCH_ARM64 blocks), "arm:<stem>" (kernels/arm/<stem>__<level>.cc) or
  // kTemplated (a family compiled at every templated level: kernels/CMakeLists.txt's list)
  const char* evidence;
};
constexpr const char* kTemplated = "kernels/CMakeLists.txt";
const Family kFamilies[] = {
    {"f32_gemm_", "kernels/gemm/f32_gemm_list.inc"}, {"f32_igemm_", "kernels/gemm/f32_gemm_list.inc"},
    {"f32_winograd", kTemplated}, {"f32_dwconv", kTemplated}, {"f32_gconv", kTemplated},
    {"q8_dwconv", "kernels/conv/dwconv_list.inc"}, {"qu8s8_", "kernels/gemm/q8_gemm_list.inc"},
    {"qs8s8_", "kernels/gemm/q8_gemm_list.inc"}, {"qu8u8_", "kernels/gemm/q8_gemm_list.inc"},
    // After the IGEMM prefixes: the last family whose prefix matches decides.
    {"qu8s8_gconv", "kernels/conv/q8_gconv_list.inc"}, {"qs8s8_gconv", "kernels/conv/q8_gconv_list.inc"},
    {"f32_add", kTemplated}, {"f32_mul", kTemplated},
    {"f32_clamp", kTemplated}, {"f32_sigmoid", kTemplated}, {"f32_where", kTemplated}, {"f32_lrn", kTemplated}, {"f32_maxpool_argmax", kTemplated},
    {"f32_roialign", kTemplated}, {"f32_gridsample", kTemplated},
    {"f32_silu", kTemplated}, {"f32_scale_shift", kTemplated}, {"f32_gap", kTemplated},
    {"f32_row_sums", kTemplated}, {"f32_eigen_sums", kTemplated}, {"q8_eigen_sums", kTemplated}, {"f32_strided_sums", kTemplated}, {"f32_channel_moments", kTemplated},
    {"f32_map_reduce", kTemplated}, {"f32_eigen_fold", kTemplated}, {"f32_sub_div", kTemplated},
    {"f32_cumsum", kTemplated},
    {"qu8_add", kTemplated}, {"qu8_mul", kTemplated},
    {"qu8_gap", kTemplated}, {"qs8_add", kTemplated},
    {"qs8_mul", kTemplated}, {"qs8_gap", kTemplated},
    {"f32_maxpool", kTemplated}, {"f32_avgpool", kTemplated},
    {"qu8_avgpool", kTemplated}, {"qs8_avgpool", kTemplated},
    {"qu8_maxpool", kTemplated}, {"q8_lookup", "arm:lookup"},
    {"q8_quantize", kTemplated}, {"q8_dequantize", kTemplated}, {"q8_affine_quantize", kTemplated},
    {"f32_fake_quantize", kTemplated},
    {"qu8_dynamic_quantize", kTemplated}, {"qu8_softmax", kTemplated},
    {"qs8_softmax", kTemplated}, {"qs8_maxpool", kTemplated},
    {"f32_sub", kTemplated}, {"f32_div", kTemplated},
    {"f32_softmax", kTemplated}, {"f32_logsoftmax", kTemplated},
    {"f32_argmax", kTemplated}, {"f32_argmin", kTemplated},
    {"f32_reduce_max", kTemplated}, {"f32_reduce_min", kTemplated},
    {"f32_strided_max", kTemplated}, {"f32_strided_min", kTemplated},
    {"f32_prelu", kTemplated}, {"f32_layernorm", kTemplated},
    {"f32_gelu", kTemplated}, {"f32_resize_linear", kTemplated},
    {"qu8_resize_linear", kTemplated}, {"qs8_resize_linear", kTemplated}, {"f32_resize_cubic", kTemplated},
    // kernels/elementwise/compare_list.h (f32_greater also names f32_greater_equal).
    {"f32_equal", kTemplated}, {"f32_greater", kTemplated}, {"f32_isnan", kTemplated}, {"f32_isinf", kTemplated},
    {"f32_sign", kTemplated}, {"f32_shrink", kTemplated}, {"f32_sum", kTemplated}, {"f32_max", kTemplated},
    {"f32_min", kTemplated},
    // kernels/elementwise/activation_list.h's kernels: every level of kernels/elementwise/eltwise_list.h has each.
#define OCTET_ACT_FAMILY(KIND, OP, SINCE, KERNEL, ...) {#KERNEL, kTemplated},
    OCTET_F32_ACTIVATIONS(OCTET_ACT_FAMILY)
#undef OCTET_ACT_FAMILY
};
const Isa kArmLevels[] = {Isa::neon, Isa::neondot, Isa::neoni8mm};

// The Arm levels with a row in `evidence` (see Family).
std::set<Isa> arm_rows(const std::string& source, const std::string& evidence) {
  std::set<Isa> levels;
  if (evidence.rfind("arm:", 0) == 0) {
    for (Isa isa : kArmLevels) {
      std::ifstream f(source + "/kernels/arm/" + evidence.substr(4) + "__" + kernels::isa_name(isa) + ".cc");
      if (f) levels.insert(isa);
    }
    return levels;
  }
  std::ifstream f(source + "/" + evidence);
  std::string line;
  if (evidence == kTemplated) {  // the levels of every `set(OCTET_TEMPLATE_LEVELS level:lanes ...)`
    while (std::getline(f, line))
      if (line.find("set(OCTET_TEMPLATE_LEVELS ") != std::string::npos)
        for (Isa isa : kArmLevels)
          if (line.find(" " + std::string(kernels::isa_name(isa)) + ":") != std::string::npos) levels.insert(isa);
    return levels;
  }
  bool arm = false;
  while (std::getline(f, line)) {
    if (line.rfind("#if", 0) == 0 || line.rfind("#elif", 0) == 0) arm = line.find("OCTET_ARCH_ARM64") != std::string::npos;
    else if (line.rfind("#else", 0) == 0 || line.rfind("#endif", 0) == 0) arm = false;
    else if (arm)
      for (Isa isa : kArmLevels) {
        const std::string name = kernels::isa_name(isa);
        for (size_t p = line.find(name); p != std::string::npos; p = line.find(name, p + 1)) {
          const char after = p + name.size() < line.size() ? line[p + name.size()] : ' ';
          if (!std::isalnum(static_cast<unsigned char>(after))) levels.insert(isa);
        }
      }
  }
  return levels;
}

// The Arm cell for a step whose avx2 kernel is `kernel` (every `__avx2` kernel it names must have
// a family with Arm rows; a level runs a row of any level it includes).
std::string derived_arm(const std::string& source, const std::string& kernel, Kind at_avx2) {
  if (at_avx2 != Kind::simd) return at_avx2 == Kind::generic ? "the same (no ISA-specific kernel)" : "not derived";
  std::set<Isa> common(std::begin(kArmLevels), std::end(kArmLevels));
  std::set<std::string> files;
  size_t parts = 0;
  for (size_t end = kernel.find("__avx2"); end != std::string::npos; end = kernel.find("__avx2", end + 1)) {
    size_t begin = end;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(kernel[begin - 1])) || kernel[begin - 1] == '_')) --begin;
    const std::string name = kernel.substr(begin, end - begin);
    const Family* fam = nullptr;
    for (const Family& f : kFamilies)
      if (name.rfind(f.prefix, 0) == 0) fam = &f;
    if (!fam) return "not derived (no family for `" + name + "`)";
    ++parts;
    files.insert(fam->evidence);
    const std::set<Isa> rows = arm_rows(source, fam->evidence);
    std::set<Isa> reach;
    for (Isa level : kArmLevels)
      for (Isa row : rows)
        if (kernels::isa_allows(level, row)) reach.insert(level);
    std::set<Isa> both;
    for (Isa l : common) if (reach.count(l)) both.insert(l);
    common = both;
  }
  if (parts == 0) return "not derived";
  if (common.empty()) return "**no Arm rows** (scalar)";
  std::string r;
  for (Isa l : common) r += std::string(r.empty() ? "" : ", ") + kernels::isa_name(l);
  std::string from;
  for (const auto& f : files) {
    std::string shown = f.rfind("arm:", 0) == 0 ? "kernels/arm/" + f.substr(4) + "__*.cc"
                        : f == kTemplated               ? "kernels/CMakeLists.txt: OCTET_TEMPLATE_LEVELS"
                                                        : f;
    from += (from.empty() ? "" : ", ") + ("`" + shown + "`");
  }
  return "SIMD at " + r + " (rows in " + from + ")";
}

// Checks the probe table against the registry: every op has a row, every row plans its step.
bool probes_complete(std::ostream& err) {
  bool ok = true;
  std::set<std::string> probed;
  for (const Probe& p : probes()) probed.insert(p.op);
  for (const std::string& op : registered_ops())
    if (!probed.count(op)) {
      err << "op " << op << " is registered (engine/op_registry.h) but has no probe row in "
          << "tools/catalogue/probes.cc: add one (a small graph whose plan has a " << op << " step)\n";
      ok = false;
    }
  for (const Probe& p : probes()) {
    if (!find_op(p.op)) {
      err << "probe row " << p.op << " (" << p.variant << ") names an op octet does not register\n";
      ok = false;
      continue;
    }
    ProbeResult r = run_probe(p, Isa::scalar);
    if (!r.planned) {
      err << "probe " << p.op << " (" << p.variant << ") does not plan: " << r.error << "\n";
      ok = false;
    } else if (p.no_step.empty() && !r.has_step) {
      err << "probe " << p.op << " (" << p.variant << ") planned no " << p.op << " step\n";
      ok = false;
    } else if (!p.no_step.empty() && r.has_step) {
      err << "probe " << p.op << " says '" << p.no_step << "' but its plan has a " << p.op << " step\n";
      ok = false;
    }
  }
  return ok;
}

// The sweep's reviewed outcomes (tests/sweep/expected.txt) per op: cases, pass, scalar, refused.
struct SweepCount {
  int cases = 0, pass = 0, scalar = 0, refused = 0, mismatch = 0;
  std::map<std::string, int> gaps;  // "<status>: <reason>" -> cases
};
std::map<std::string, SweepCount> sweep_counts(const std::string& path) {
  std::map<std::string, SweepCount> m;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string status, id;
    s >> status >> id;
    // Case ids are <mode>/<Op>/<attributes>: the op is the second part.
    const size_t a = id.find('/'), b = id.find('/', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    SweepCount& c = m[id.substr(0, a) + " " + id.substr(a + 1, b - a - 1)];
    ++c.cases;
    if (status == "pass") ++c.pass;
    else if (status == "scalar") ++c.scalar;
    else if (status == "refused") ++c.refused;
    else ++c.mismatch;
    if (status != "pass") {
      const size_t hash = line.find("  # ");
      std::string why = hash == std::string::npos ? "" : line.substr(hash + 4);
      // Numbers in a reason (sizes, differences) vary by case: keep the part before them.
      if (status == "mismatch") why = why.substr(0, why.find(':'));
      if (status == "refused") {  // "model.onnx: node '/Conv' (Conv), opset 17: <why>"
        if (why.rfind("model.onnx: ", 0) == 0) why = why.substr(12);
        const size_t opset = why.find(", opset ");
        if (opset != std::string::npos && why.find(": ", opset) != std::string::npos)
          why = why.substr(why.find(": ", opset) + 2);
      }
      ++c.gaps[status + (why.empty() ? "" : ": " + why)];
    }
  }
  return m;
}

std::string write(const std::vector<Isa>& levels, const std::string& expected_path, const std::string& source,
                  bool committed) {
  std::ostringstream o;
  o << "# Operator catalogue\n\n"
    << "<!-- Generated by tools/catalogue.sh (the octet_catalogue program, tools/catalogue/): do not edit.\n"
    << "     ctest -R ops_catalogue fails when this file is stale; regenerate with tools/catalogue.sh. -->\n\n"
    << "Every ONNX op octet reads and every op its planner runs, generated from the engine: the loader's "
       "import table (`loader/importers.cc`: opsets, attributes and defaults), the op registry "
       "(`engine/op_registry.h`: ops with a plan step), the INT8 table (`core/int8_ops.h`: which QDQ unit "
       "becomes which INT8 op, what octet's quantizers write) and the **probe table** "
       "(`tools/catalogue/probes.cc`): one or more small graphs per registered op, each loaded through the "
       "loader and the passes and planned at batch 1 at each ISA level; the kernel column is the kernel "
       "name the planned step reports (as `octet info --kernels` shows it).\n\n"
    << "How to read the kernel columns:\n\n"
    << "- `scalar` and `avx2` are **probed** (the planner ran at that level). A name ending in `__ref` (bold) "
       "is octet's scalar reference kernel: the step has no SIMD path for that case, with the planner's "
       "reason in parentheses. \"(op names no kernel)\": the op's build() does not report a kernel name "
       "(`OpContext::report_kernel`), so the planner cannot tell whether it is scalar; a kernel without a "
       "`__<isa>` suffix (copies, transposes) is the same code at every level.\n"
    << "- The x86 levels above avx2 (avxvnni, avx256vnni, avx512, avx512vnni, avx512amx) are **not probed** in this "
       "file, so that it is the same on every AVX2 machine that regenerates it: each of them includes "
       "avx2's features, and the planner takes the best kernel the level allows, so a step SIMD at avx2 is "
       "SIMD there too (often with a wider kernel: run `octet_catalogue --here` on such a CPU to see which). "
       "The Arm levels (neon, neondot, neoni8mm) are **derived from the kernel lists**, not probed: the x86 "
       "build has no Arm kernels to plan with. For each `__avx2` kernel a step names, the generator finds its "
       "family's list (`kernels/*_list.h` / `*_list.inc`, the rows behind `OCTET_ARCH_ARM64`; or the "
       "`kernels/arm/<family>__<level>.cc` files) and lists the Arm levels that have a row or include a level "
       "that has one. It says the family has an Arm kernel, not that every case of the step takes it; "
       "`tools/arm/test.sh --models` runs the bundled models at each Arm level under qemu.\n"
    << "- The sweep column counts the sweep's cases for the op (tests/sweep, `tools/sweep.sh`) by their "
       "reviewed outcome in `tests/sweep/expected.txt`: pass / scalar (right answer, a `__ref` step at "
       "avx2) / refused (octet rejects the case) / mismatch.\n\n";
  if (!committed) o << "**Probed on this CPU at every level it runs: not the committed file.**\n\n";

  // ---- ONNX ops ----
  const auto registered = registered_ops();
  auto is_registered = [&](const std::string& op) { return find_op(op) != nullptr; };
  std::vector<std::string> onnx_ops = loader::supported_ops();
  for (const auto& op : loader::supported_contrib_ops()) onnx_ops.push_back(op);
  std::sort(onnx_ops.begin(), onnx_ops.end());
  const auto sweep = sweep_counts(expected_path);
  auto sweep_str = [&](const std::string& mode, const std::string& op) -> std::string {
    auto it = sweep.find(mode + " " + op);
    if (it == sweep.end()) return "";
    const SweepCount& c = it->second;
    std::string s = std::to_string(c.cases) + ": " + std::to_string(c.pass) + " pass";
    if (c.scalar) s += ", **" + std::to_string(c.scalar) + " scalar**";
    if (c.refused) s += ", **" + std::to_string(c.refused) + " refused**";
    if (c.mismatch) s += ", **" + std::to_string(c.mismatch) + " mismatch**";
    return s;
  };

  o << "## ONNX ops octet reads\n\n"
    << "Float ops first, then the INT8 ops files may hold. *Static INT8*: the op a QDQ unit around the float "
       "op becomes (`fuse_qdq`), and whether octet's static quantizer writes that unit; *dynamic INT8*: what "
       "octet's dynamic quantizer writes. *Moves bytes*: between equal Q/DQ parameters the op runs on the "
       "8-bit integers. *Step*: the planner runs it (the ops without one are rewritten away by the loader "
       "or the passes).\n\n"
    << "| Op | Domain | From opset | Step | Static INT8 | Dynamic INT8 | Attributes (default) | Sweep FP32 | Sweep INT8 |\n"
    << "|---|---|---|---|---|---|---|---|---|\n";
  for (const bool int8_rows : {false, true}) {
    for (const auto& op : onnx_ops) {
      if ((int8::find(op) != nullptr || op == "QuantizeLinear" || op == "DequantizeLinear" ||
           op == "DynamicQuantizeLinear") != int8_rows)
        continue;
      std::string stat, dyn;
      if (const int8::Int8Op* f = int8::fused_from(op)) {
        const int8::Int8Op* q = int8::static_form(op);
        stat = "`" + f->op + "`" + (q ? " (quantizer writes it)" : " (read from QDQ files)");
      } else if (int8::moves_data_only(op)) {
        stat = "moves bytes";
      } else if (int8::scatters_data_only(op)) {
        stat = "moves bytes (replacing, max, min; read from QDQ files)";
      } else if (int8::float_unit_rule(op) != int8::QuantRule::none) {
        stat = "float between Q and DQ, as ORT's CPU provider (quantizer writes it)";
      }
      if (const int8::Int8Op* d = int8::dynamic_form(op)) dyn = "`" + d->op + "`";
      const loader::ImportSchema* s = loader::import_schema(op);
      const std::string dom = domain_str(op);
      std::string sweep_int8 = sweep_str("qdq", op);
      const std::string dyn_sweep = sweep_str("dynamic", op);
      if (!dyn_sweep.empty()) sweep_int8 += (sweep_int8.empty() ? "dynamic " : "; dynamic ") + dyn_sweep;
      o << "| " << op << " | " << (dom.empty() ? "ai.onnx" : dom) << " | "
        << (dom.empty() && s ? std::to_string(s->min_opset) : "1") << " | "
        << (is_registered(op) ? "yes" : "rewritten") << " | " << stat << " | " << dyn << " | " << attrs_str(op)
        << " | " << sweep_str("fp32", op) << " | " << sweep_int8 << " |\n";
    }
  }
  o << "\n## Gaps the sweep found\n\n"
    << "Per op and mode, the cases of `tests/sweep/expected.txt` that do not pass, by outcome and reason "
       "(reasons shortened; the file has each case's own). The sweep runs at avx2 here.\n\n"
    << "| Op | Cases | Outcome and reason |\n|---|---|---|\n";
  for (const auto& [key, c] : sweep) {
    if (c.gaps.empty()) continue;
    std::string cell;
    for (const auto& [why, n] : c.gaps) {
      std::string w = why;
      for (size_t p; (p = w.find('|')) != std::string::npos;) w.replace(p, 1, "/");
      cell += (cell.empty() ? "" : "<br>") + std::to_string(n) + " " + w;
    }
    o << "| " << key << " | " << c.cases << " | " << cell << " |\n";
  }
  o << "\n## Ops octet's passes write\n\n"
    << "Registered ops no file holds: the passes form them from patterns (the probe column says which).\n\n"
    << "| Op | Formed from |\n|---|---|\n";
  for (const auto& op : registered) {
    if (loader::import_schema(op)) continue;
    std::string from;
    for (const Probe& p : probes())
      if (p.op == op) from = p.variant;
    o << "| " << op << " | " << from << " |\n";
  }

  // ---- Kernels ----
  o << "\n## Kernels per ISA level\n\n| Op | Probe |";
  for (Isa isa : levels) o << " " << kernels::isa_name(isa) << " |";
  if (committed) o << " avxvnni, avx256vnni, avx512, avx512vnni, avx512amx | neon, neondot, neoni8mm |";
  o << "\n|---|---|";
  for (size_t i = 0; i < levels.size() + (committed ? 2 : 0); ++i) o << "---|";
  o << "\n";
  std::map<Kind, int> kinds;
  for (const Probe& p : probes()) {
    o << "| " << p.op << " | " << (p.variant.empty() ? "" : p.variant) << (p.no_step.empty() ? "" : " — " + p.no_step)
      << " |";
    Kind top = Kind::none;
    std::string top_kernel;
    for (Isa isa : levels) {
      Cell c = probe_cell(p, isa);
      o << " " << c.text << " |";
      top = c.kind;
      top_kernel = c.kernel;
    }
    ++kinds[top];
    if (committed) o << " " << derived_x86(top) << " | " << derived_arm(source, top_kernel, top) << " |";
    o << "\n";
  }
  o << "\nAt " << kernels::isa_name(levels.back()) << ": " << kinds[Kind::simd] << " probes run a SIMD kernel, "
    << kinds[Kind::scalar] << " the scalar reference (`__ref`), " << kinds[Kind::generic]
    << " a kernel with no ISA level (copies, transposes), " << kinds[Kind::unnamed]
    << " a step whose op names no kernel (so the planner cannot say whether it is scalar: these ops' kernels are "
       "still to be named), " << kinds[Kind::none] << " no step.\n";
  return o.str();
}

int main(int argc, char** argv) {
  std::string out, check, expected, source;
  bool here = false, probes_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "-o" || a == "--check" || a == "--sweep-expect" || a == "--source") && i + 1 < argc) {
      (a == "-o" ? out : a == "--check" ? check : a == "--sweep-expect" ? expected : source) = argv[++i];
    } else if (a == "--here") {
      here = true;
    } else if (a == "--probes-only") {
      probes_only = true;
    } else {
      std::cerr << "usage: octet_catalogue [-o FILE | --check FILE | --here | --probes-only] [--sweep-expect tests/sweep/expected.txt] [--source ROOT]\n";
      return 2;
    }
  }
  if (!probes_complete(std::cerr)) return 1;
  if (probes_only) return 0;
  std::vector<Isa> levels;
  if (here) {
    levels = kernels::runnable_isas();
  } else {
    if (!kernels::isa_supported(Isa::avx2)) {
      std::cerr << "octet_catalogue: the committed catalogue probes scalar and avx2; this CPU has no avx2 (skipped)\n";
      return 77;
    }
    levels = {Isa::scalar, Isa::avx2};
  }
  // The source tree (kernel lists, for the Arm columns): given, or the one expected.txt sits in.
  if (source.empty()) {
    const size_t at = expected.rfind("tests/sweep/");
    source = at == std::string::npos || at == 0 ? "." : expected.substr(0, at - 1);
  }
  const std::string text = write(levels, expected, source, !here);
  // Every SIMD kernel the probes name belongs to a family above, so its Arm cell is derived.
  if (!here && text.find("(no family for") != std::string::npos) {
    const size_t at = text.find("(no family for");
    std::cerr << "octet_catalogue: a kernel has no family in kFamilies (tools/catalogue/catalogue_main.cc), so its Arm "
                 "cell is not derived: "
              << text.substr(at, text.find(')', at) - at + 1) << "\n";
    return 1;
  }
  if (!check.empty()) {
    std::ifstream in(check, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    if (s.str() == text) return 0;
    std::cerr << check << " is stale: it is not what the engine and the probe table generate now.\n"
              << "Regenerate it with tools/catalogue.sh (builds octet_catalogue and writes docs/ops.md), "
                 "review the diff and commit it.\n";
    std::istringstream a(s.str()), b(text);
    std::string la, lb;
    for (int line = 1;; ++line) {
      bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
      if (ea && eb) break;
      if (la != lb || ea != eb) {
        std::cerr << "first difference at line " << line << ":\n  committed: " << (ea ? "(end)" : la)
                  << "\n  generated: " << (eb ? "(end)" : lb) << "\n";
        break;
      }
    }
    return 1;
  }
  if (out.empty()) {
    std::cout << text;
  } else {
    std::ofstream f(out, std::ios::binary);
    f << text;
    if (!f) {
      std::cerr << "octet_catalogue: cannot write " << out << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace generator
}  // namespace octet::catalogue

int main(int argc, char** argv) { return octet::catalogue::generator::main(argc, argv); }
