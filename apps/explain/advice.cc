#include "apps/explain/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "kernels/isa.h"
#include "apps/explain/step_category.h"

namespace octet::explain {
namespace {

using json = nlohmann::json;

std::optional<double> ms_of(const json& report, const std::string& engine, const std::string& precision,
                            const std::string& isa, int batch) {
  const int threads = report.contains("options") ? report["options"].value("threads", 1) : 1;
  for (const auto& row : report.value("speed", json::array())) {
    if (row.value("engine", "") != engine || row.value("precision", "") != precision || row.value("batch", 0) != batch ||
        row.value("threads", 1) != threads)
      continue;
    if (engine == "octet" && row.value("isa", "") != isa) continue;
    return row.value("ms_per_image", 0.0);
  }
  return std::nullopt;
}

// The measured levels, lowest first.
std::vector<std::string> levels_of(const json& report) {
  std::vector<std::string> levels;
  for (const auto& l : report["options"].value("levels", json::array())) levels.push_back(l.get<std::string>());
  return levels;
}

bool dot_product(const std::string& level) {
  auto isa = kernels::parse_isa(level);
  return isa && has_int8_dot_product(*isa);
}

std::string times(double a, double b) {  // "2.1x faster" / "1.3x slower": a is the new time, b the old
  return a <= b ? fmt::format("{:.2f}x faster", b / a) : fmt::format("{:.2f}x slower", a / b);
}

const char* precision_words(const std::string& p) {
  return p == "int8_static" ? "static INT8" : p == "int8_dynamic" ? "dynamic INT8" : "FP32";
}

// The cost of quantizing at run time in the dynamic profile at `level`, batch 1: its
// DynamicQuantizeLinear steps, plus the range passes producers run for them ("+ output range").
struct DynamicQuantizeCost {
  int steps = 0;
  double range_us = 0, quantize_us = 0, total_us = 0;
};
std::optional<DynamicQuantizeCost> dynamic_quantize_cost(const json& report, const std::string& level) {
  for (const auto& prof : report.value("profiles", json::array())) {
    if (prof.value("precision", "") != "int8_dynamic" || prof.value("isa", "") != level || prof.value("batch", 1) != 1)
      continue;
    DynamicQuantizeCost c;
    c.total_us = prof.value("total_us", 0.0);
    for (const auto& s : prof.value("steps", json::array())) {
      const double range = s.value("range_us", 0.0);
      c.range_us += range;
      if (s.value("op", "") != "DynamicQuantizeLinear") continue;
      ++c.steps;
      c.quantize_us += s.value("us", 0.0) - range;
    }
    return c;
  }
  return std::nullopt;
}

}  // namespace

json recommendations(const json& report) {
  json out = json::array();
  const auto levels = levels_of(report);
  if (levels.empty()) return out;
  const std::string best = levels.back();

  // Static against dynamic quantization.
  const auto stat = ms_of(report, "octet", "int8_static", best, 1);
  const auto dyn = ms_of(report, "octet", "int8_dynamic", best, 1);
  if (stat && dyn && *dyn > 1.2 * *stat)
    out.push_back({{"id", "static_over_dynamic"},
                   {"text", fmt::format("Use static quantization: {:.1f}x faster than dynamic here ({:.3f} vs {:.3f} ms "
                                        "per image at {}, batch 1); dynamic quantization computes every "
                                        "activation's range at run time.",
                                        *dyn / *stat, *stat, *dyn, best)},
                   {"effect", {{"metric", "ms_per_image"}, {"from", *dyn}, {"to", *stat}}}});

  // INT8 slower than FP32 at the best level.
  const auto fp32 = ms_of(report, "octet", "fp32", best, 1);
  for (const char* p : {"int8_static", "int8_dynamic"}) {
    const auto q = ms_of(report, "octet", p, best, 1);
    if (!fp32 || !q || *q <= *fp32) continue;
    std::string why = dot_product(best)
                          ? "see the steps below for where the time goes"
                          : fmt::format("{} has no integer dot-product instruction (VNNI, SDOT), so INT8 multiplies no "
                                        "faster than FP32 and pays for quantizing on top",
                                        best);
    out.push_back({{"id", std::string("fp32_faster_") + p},
                   {"text", fmt::format("On this CPU FP32 is the faster choice: {} runs {} than FP32 at {} "
                                        "({:.3f} vs {:.3f} ms per image, batch 1); {}.",
                                        precision_words(p), times(*q, *fp32), best, *q, *fp32, why)},
                   {"effect", {{"metric", "ms_per_image"}, {"from", *q}, {"to", *fp32}}}});
  }

  // Scalar fallbacks at a SIMD level.
  for (const auto& prof : report.value("profiles", json::array())) {
    if (prof.value("isa", "") != best || best == "scalar") continue;
    std::vector<std::string> slow;
    double us = 0, total = prof.value("total_us", 0.0);
    for (const auto& s : prof.value("steps", json::array()))
      if (s.value("scalar", false)) {
        slow.push_back(s.value("node", "") + " (" + s.value("op", "") + ")");
        us += s.value("us", 0.0);
      }
    if (slow.empty()) continue;
    std::string names;
    for (size_t i = 0; i < slow.size() && i < 4; ++i) names += (i ? ", " : "") + slow[i];
    if (slow.size() > 4) names += fmt::format(" and {} more", slow.size() - 4);
    out.push_back({{"id", "scalar_fallback_" + prof.value("precision", std::string())},
                   {"text", fmt::format("{} step(s) of the {} model run scalar reference kernels at {}, {:.0f}% of its "
                                        "time: {}. Their time measures octet's missing kernels, not the hardware.",
                                        slow.size(), precision_words(prof.value("precision", "")), best,
                                        100.0 * us / std::max(total, 1e-9), names)}});
  }

  // Quantization overhead in the INT8 profiles.
  for (const auto& prof : report.value("profiles", json::array())) {
    const std::string p = prof.value("precision", "");
    if (prof.value("isa", "") != best || p == "fp32") continue;
    const json& c = prof["categories"];
    const double total = prof.value("total_us", 0.0);
    const double overhead = c.value("quantize", 0.0) + c.value("dynamic_range", 0.0);
    if (total > 0 && overhead / total > 0.15)
      out.push_back({{"id", "quantize_overhead_" + p},
                     {"text", fmt::format("{:.0f}% of the {} time at {} is spent quantizing and dequantizing "
                                          "({:.1f} of {:.1f} us per image{}).",
                                          100.0 * overhead / total, precision_words(p), best, overhead, total,
                                          c.value("dynamic_range", 0.0) > 0
                                              ? fmt::format(", of which {:.1f} us computing ranges at run time",
                                                            c.value("dynamic_range", 0.0))
                                              : "")}});
  }

  // Accuracy culprits, with the ranges the calibration methods would choose.
  if (report.contains("accuracy")) {
    const json& acc = report["accuracy"];
    for (const auto& t : acc.value("tensors", json::array())) {
      if (!t.value("culprit", false)) continue;
      const auto range = t["range"];
      std::string text = fmt::format(
          "Layer {} ({}) loses {:.1f} dB of SQNR against its inputs (output {} at {:.1f} dB, {:.2f}% of its values "
          "clipped by the range [{:.3g}, {:.3g}]).",
          t.value("producer", ""), t.value("op", ""), t.value("sqnr_drop_db", 0.0), t.value("name", ""),
          t.value("sqnr_db", 0.0), 100.0 * t.value("clip_rate", 0.0), range[0].get<double>(),
          range[1].get<double>());
      const json& m = t["methods"];
      if (t.value("clip_rate", 0.0) > 0.001 && m.contains("minmax"))
        text += fmt::format(" MinMax calibration would cover [{:.3g}, {:.3g}].", m["minmax"][0].get<double>(),
                            m["minmax"][1].get<double>());
      else if (m.contains("percentile") && m.contains("minmax")) {
        const double full = m["minmax"][1].get<double>() - m["minmax"][0].get<double>();
        const double pct = m["percentile"][1].get<double>() - m["percentile"][0].get<double>();
        if (pct > 0 && full / pct > 1.5)
          text += fmt::format(" Its range is set by rare outliers: percentile calibration would choose "
                              "[{:.3g}, {:.3g}], {:.1f}x narrower (finer steps, a few values clipped).",
                              m["percentile"][0].get<double>(), m["percentile"][1].get<double>(), full / pct);
      }
      text += " Keeping it in float (octet quantize --keep-float " + t.value("op", std::string("OP")) +
              ") removes this loss at the cost of a dequantize/quantize pair.";
      out.push_back({{"id", "culprit_" + t.value("name", std::string())}, {"text", text}});
    }
    // Another calibration method, measured: recommended only when it did better.
    for (const auto& alt : acc.value("alternatives", json::array())) {
      const std::string m = alt.value("method", "");
      const json sq = acc.value("output_sqnr_db", json::object());
      const double now_sqnr = sq.value("int8_static", 0.0), alt_sqnr = alt.value("output_sqnr_db", 0.0);
      const json top = acc.value("top1", json::object());
      const bool labels = top.contains("int8_static") && alt.contains("top1");
      const double now_top1 = labels ? top["int8_static"].get<double>() : 0.0;
      const double alt_top1 = labels ? alt["top1"].get<double>() : 0.0;
      const bool better = labels ? alt_top1 > now_top1 + 1e-9 || (alt_top1 == now_top1 && alt_sqnr > now_sqnr + 1.0)
                                 : alt_sqnr > now_sqnr + 1.0;
      if (!better) continue;
      std::string text = fmt::format("Calibrate with {} instead of {}: output SQNR {:.1f} -> {:.1f} dB", m,
                                     acc.value("method", std::string("the current method")), now_sqnr, alt_sqnr);
      if (labels) text += fmt::format(", top-1 {:.2f}% -> {:.2f}%", 100.0 * now_top1, 100.0 * alt_top1);
      // The culprit (or else the worst tensor) before and after.
      const json tensors = acc.value("tensors", json::array());
      const json* worst = nullptr;  // the first culprit, else the lowest SQNR
      for (const auto& t : tensors) {
        if (!t.contains("sqnr_db")) continue;
        if (t.value("culprit", false)) {
          worst = &t;
          break;
        }
        if (!worst || t["sqnr_db"].get<double>() < (*worst)["sqnr_db"].get<double>()) worst = &t;
      }
      const json alt_t = alt.value("tensors_sqnr_db", json::object());
      if (worst && alt_t.contains(worst->value("name", std::string())))
        text += fmt::format("; {} {:.1f} -> {:.1f} dB", worst->value("name", std::string()),
                            (*worst)["sqnr_db"].get<double>(), alt_t[worst->value("name", std::string())].get<double>());
      text += fmt::format(" (octet quantize --method {}; measured on the same {} images).", m, acc.value("images", 0));
      out.push_back({{"id", "calibrate_with_" + m}, {"text", text},
                     {"effect", {{"metric", labels ? "top1" : "output_sqnr_db"},
                                 {"from", labels ? now_top1 : now_sqnr},
                                 {"to", labels ? alt_top1 : alt_sqnr}}}});
    }
    if (acc.contains("top1") && acc["top1"].contains("fp32")) {
      const double f = acc["top1"]["fp32"].get<double>();
      for (const char* p : {"int8_static", "int8_dynamic"}) {
        if (!acc["top1"].contains(p)) continue;
        const double q = acc["top1"][p].get<double>();
        if (f - q > 0.01)
          out.push_back({{"id", std::string("accuracy_loss_") + p},
                         {"text", fmt::format("{} loses {:.1f} points of top-1 ({:.1f}% vs {:.1f}% over {} images): "
                                              "try --method percentile or entropy, or --act int8 / uint8.",
                                              precision_words(p), 100.0 * (f - q), 100.0 * q, 100.0 * f,
                                              acc.value("images", 0))}});
      }
    }
  }
  return out;
}

std::string verdict(const json& report) {
  const auto levels = levels_of(report);
  if (levels.empty()) return "Nothing was measured.";
  const std::string best = levels.back();
  std::string v;
  const auto fp32 = ms_of(report, "octet", "fp32", best, 1);
  std::vector<std::string> runs;
  for (const char* p : {"int8_static", "int8_dynamic"}) {
    const auto q = ms_of(report, "octet", p, best, 1);
    if (fp32 && q)
      runs.push_back(fmt::format("{} runs {} than FP32 ({:.3f} vs {:.3f} ms per image)", precision_words(p),
                                 times(*q, *fp32), *q, *fp32));
  }
  if (!runs.empty()) {
    v += fmt::format("At {}, the best level measured, batch 1: {}", best, runs[0]);
    for (size_t i = 1; i < runs.size(); ++i) v += "; " + runs[i];
    v += ". ";
  }
  if (const auto dq = dynamic_quantize_cost(report, best); dq && dq->steps > 0 && dq->total_us > 0) {
    const double us = dq->range_us + dq->quantize_us;
    v += fmt::format("The dynamic INT8 model quantizes {} tensor(s) at run time (DynamicQuantizeLinear): {:.1f}% of its "
                     "time ({:.2f} of {:.2f} ms per image; {:.2f} ms finding each tensor's range, {:.2f} ms rounding "
                     "it to 8 bits). ",
                     dq->steps, 100.0 * us / dq->total_us, us / 1e3, dq->total_us / 1e3, dq->range_us / 1e3,
                     dq->quantize_us / 1e3);
  }
  // The highest level without an integer dot product, when the best one has it.
  if (dot_product(best)) {
    for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
      if (dot_product(*it) || *it == "scalar") continue;
      const auto f = ms_of(report, "octet", "fp32", *it, 1);
      const auto q = ms_of(report, "octet", "int8_static", *it, 1);
      if (f && q)
        v += fmt::format("Without an integer dot-product instruction ({}), static INT8 runs {} than FP32. ", *it,
                         times(*q, *f));
      break;
    }
  } else if (best != "scalar") {
    v += fmt::format("{} has no integer dot-product instruction (VNNI or SDOT): INT8 products are widened to 16 bits, "
                     "no more multiply-adds per instruction than FP32",
                     best);
    std::string peak;
    if (report.contains("machine"))
      for (const auto& p : report["machine"].value("peaks", json::array()))
        if (p.value("isa", "") == best)
          peak = fmt::format(" (this core's measured peaks: FP32 {:.1f} GFLOP/s, INT8 {:.1f} GOP/s)",
                             p.value("f32_gflops", 0.0), p.value("int8_gops", 0.0));
    v += peak + ". ";
  }
  if (report.contains("accuracy")) {
    const json& acc = report["accuracy"];
    const json agreement = acc.value("agreement", json::object());  // items() must not outlive it
    for (const auto& [p, a] : agreement.items())
      v += fmt::format("The {} top-1 agrees with FP32's on {:.1f}% of {} images", precision_words(p), 100.0 * a.get<double>(),
                       acc.value("images", 0)) +
           (acc.contains("output_sqnr_db") && acc["output_sqnr_db"].contains(p)
                ? fmt::format(" (output SQNR {:.1f} dB). ", acc["output_sqnr_db"][p].get<double>())
                : ". ");
    int culprits = 0;
    for (const auto& t : acc.value("tensors", json::array())) culprits += t.value("culprit", false);
    if (culprits) v += fmt::format("{} layer(s) lose most of the accuracy (see the culprits below).", culprits);
  }
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace octet::explain
