#include "apps/cli/eval_report.h"

#include <fmt/format.h>

#include "apps/cli/stats.h"

namespace octet::cli {
namespace {

using json = nlohmann::json;

std::string pct(const json& v) { return fmt::format("{:.2f}%", 100 * v.get<double>()); }
std::string kb(const json& v) { return fmt::format("{:.1f} KB", v.get<double>() / 1024.0); }

// The INT8 model's origin: the file itself, or what calibration made of the FP32 one.
void int8_origin_lines(std::back_insert_iterator<std::string> out, const json& r) {
  if (!r.contains("int8_model")) return;
  const auto& m = r["int8_model"];
  if (m["source"] == "model") {
    fmt::format_to(out, "int8     the model itself (already quantized)\n");
    return;
  }
  const auto& c = r["calibration"];
  fmt::format_to(out, "int8     quantized in memory ({} QDQ): {}, weights {}, activations {}\n", kb(m["bytes"]),
                 c["method"].get<std::string>(), c["weights"].get<std::string>(),
                 c["activations"].get<std::string>());
  fmt::format_to(out, "         calibrated on {} images ({}) of {}\n", c["images"].get<int64_t>(),
                 c["selection"].get<std::string>(), c["data"].get<std::string>());
  fmt::format_to(out, "         {} nodes in INT8, {} kept in float, {} activations absorbed, {} warnings\n",
                 c["quantized"].size(), c["float_ops"].size(), c["absorbed"].size(), c["warnings"].size());
  for (const auto& f : c["float_ops"]) fmt::format_to(out, "           float: {}\n", f.get<std::string>());
  for (const auto& w : c["warnings"]) fmt::format_to(out, "           warning: {}\n", w.get<std::string>());
}

std::string logits_line(const json& l) {
  if (l.contains("skipped")) return "int8 logits: not compared (" + l["skipped"].get<std::string>() + ")";
  std::string s = fmt::format("int8 logits identical: {:.2f}%", 100 * l["identical_share"].get<double>());
  if (l.contains("max_lsb")) s += fmt::format(" (max {} LSB)", l["max_lsb"].get<int64_t>());
  return s + fmt::format("  [{} vs ORT, {} values]", l["tensor"].get<std::string>(), l["values"].get<int64_t>());
}

// Per-image P50 of one engine at (batch, 1 thread), or null.
json p50(const json& section, int batch, const char* engine) {
  for (const auto& row : section["latency"])
    if (row["batch"] == batch && row["threads"] == 1 && row.contains(engine) && !row[engine].is_null())
      return row[engine]["per_image_ms"]["p50"];
  return nullptr;
}

json stats_json(const LatencyStats& s) {
  return {{"samples", s.samples}, {"mean", s.mean}, {"std", s.stddev}, {"cv", s.cv}, {"p50", s.p50},
          {"p95", s.p95}, {"iqr", s.iqr}, {"min", s.min}, {"max", s.max}};
}

}  // namespace

json metrics_json(const ClassificationMetrics& m, const std::vector<std::string>& classes) {
  json per_class = json::array();
  for (size_t c = 0; c < m.per_class_total.size(); ++c)
    per_class.push_back({{"class", c < classes.size() ? classes[c] : std::to_string(c)},
                         {"correct", m.per_class_correct[c]}, {"total", m.per_class_total[c]}});
  return {{"images", m.images}, {"labelled", m.labelled}, {"top1", m.top1()}, {"top5", m.top5()},
          {"top1_correct", m.top1_correct}, {"per_class", per_class}, {"confusion", m.confusion}};
}

json timing_json(const std::string& engine, int batch, int threads, const std::vector<double>& run_ms, int64_t images) {
  // Per-run figures are per batch; per-image figures divide by the batch.
  std::vector<double> full;
  const size_t runs = run_ms.size();
  for (size_t i = 0; i < runs; ++i)
    if (batch == 1 || i + 1 < runs || images % batch == 0) full.push_back(run_ms[i]);
  if (full.empty()) full = run_ms;
  auto per_batch = summarize(full);
  return {{"engine", engine}, {"batch", batch}, {"threads", threads},
          {"per_batch_ms", stats_json(per_batch)}, {"per_image_ms", stats_json(per_item(per_batch, batch))}};
}

std::string single_report_text(const json& r) {
  std::string text;
  auto out = std::back_inserter(text);
  const std::string prec = r.value("precision", "fp32") == "int8" ? " INT8" : "";
  fmt::format_to(out, "model    {} ({:.1f} KB, {} parameters)\n", r["model"].get<std::string>(),
                 r["file_bytes"].get<double>() / 1024.0, r["parameters"].get<int64_t>());
  fmt::format_to(out, "data     {}\n", r["data"].get<std::string>());
  int8_origin_lines(out, r);
  const bool ort = r.contains("ort");
  fmt::format_to(out, "\n{:<32} {:>16} {:>16} {:>10}\n", "", "octet" + prec,
                 ort ? "ORT " + r["ort"]["version"].get<std::string>() + prec : "", ort ? "octet/ORT" : "");
  const auto& om = r["octet"]["accuracy"];
  fmt::format_to(out, "{:<32} {:>16} {:>16}\n", "top-1", pct(om["top1"]), ort ? pct(r["ort"]["accuracy"]["top1"]) : "");
  fmt::format_to(out, "{:<32} {:>16} {:>16}\n", "top-5", pct(om["top5"]), ort ? pct(r["ort"]["accuracy"]["top5"]) : "");
  if (ort) {
    const auto& a = r["agreement"];
    fmt::format_to(out, "{:<32} {:>16}\n", "top-1 agreement",
                   fmt::format("{}/{}", a["same_top1"].get<int64_t>(), a["images"].get<int64_t>()));
    fmt::format_to(out, "{:<32} {:>16}\n", "max |octet - ORT| (max |ORT|)",
                   fmt::format("{:.2g} ({:.3g})", a["max_abs_diff"].get<double>(), a["max_abs_ref"].get<double>()));
    if (r.contains("int8_logits")) fmt::format_to(out, "{}\n", logits_line(r["int8_logits"]));
  }
  fmt::format_to(out, "\nlatency, ms per image after warm-up (per-batch figures in --json)\n");
  fmt::format_to(out, "  {:<20} {:^42} {:^42} {:>9}\n", "", "octet" + prec, ort ? "ORT" + prec : "",
                 ort ? "octet/ORT" : "");
  std::string head;
  for (const char* h : {"mean", "P50", "P95", "std", "IQR", "CV"}) head += fmt::format("{:>7}", h);
  fmt::format_to(out, "  {:<20} {:>42} {:>42} {:>9}\n", "", head, ort ? head : "", ort ? "(P50)" : "");
  auto cells = [](const json& e) {
    if (e.is_null()) return fmt::format("{:>42}", "-");
    const auto& s = e["per_image_ms"];
    std::string line;
    for (const char* k : {"mean", "p50", "p95", "std", "iqr"}) line += fmt::format("{:>7.3f}", s[k].get<double>());
    return line + fmt::format("{:>6.0f}%", 100 * s["cv"].get<double>());
  };
  for (const auto& t : r["latency"]) {
    const json& o = t["octet"];
    const json ortj = t.contains("ort") ? t["ort"] : json();
    std::string ratio;
    if (!o.is_null() && !ortj.is_null() && ortj["per_image_ms"]["p50"].get<double>() > 0)
      ratio = fmt::format("{:.2f}x", o["per_image_ms"]["p50"].get<double>() / ortj["per_image_ms"]["p50"].get<double>());
    const int threads = t["threads"];
    const std::string label = fmt::format("batch {}, {} thread{}", t["batch"].get<int>(), threads, threads > 1 ? "s" : "");
    fmt::format_to(out, "  {:<20} {} {} {:>9}\n", label, cells(o), ort ? cells(ortj) : "", ratio);
  }
  if (r.contains("note")) fmt::format_to(out, "\nnote: {}\n", r["note"].get<std::string>());

  const auto& pc = om["per_class"];
  fmt::format_to(out, "\nper class (octet{})      correct/total   top-1\n", prec);
  for (const auto& c : pc) {
    int64_t total = c["total"], correct = c["correct"];
    fmt::format_to(out, "  {:<20} {:>6}/{:<6} {:>7.2f}%\n", c["class"].get<std::string>(), correct, total,
                   total ? 100.0 * double(correct) / double(total) : 0.0);
  }
  const auto& cm = om["confusion"];
  if (cm.empty()) {
    fmt::format_to(out, "\nno confusion matrix for {} classes (kept up to {})\n", pc.size(), kMaxConfusionClasses);
    return text;
  }
  fmt::format_to(out, "\nconfusion matrix (octet{}; rows = true class, columns = predicted)\n      ", prec);
  for (size_t j = 0; j < cm.size(); ++j) fmt::format_to(out, "{:>6}", j);
  fmt::format_to(out, "\n");
  for (size_t i = 0; i < cm.size(); ++i) {
    fmt::format_to(out, "  {:>3} ", i);
    for (const auto& v : cm[i]) fmt::format_to(out, "{:>6}", v.get<int64_t>());
    fmt::format_to(out, "\n");
  }
  return text;
}

std::string side_by_side_report_text(const json& r) {
  std::string text;
  auto out = std::back_inserter(text);
  const json& f = r["fp32"];
  // The quantized sections present, in order: static INT8, dynamic INT8.
  std::vector<std::pair<std::string, std::string>> quant;  // key, column name
  if (r.contains("int8")) quant.emplace_back("int8", r.contains("dynamic") ? "static" : "INT8");
  if (r.contains("dynamic")) quant.emplace_back("dynamic", "dynamic");
  const bool ort = f.contains("ort");
  fmt::format_to(out, "model    {} ({}, {} parameters)\n", r["model"].get<std::string>(), kb(r["file_bytes"]),
                 r["parameters"].get<int64_t>());
  fmt::format_to(out, "data     {}\n", r["data"].get<std::string>());
  int8_origin_lines(out, r);
  if (r.contains("dynamic_model")) {
    const auto& c = r["dynamic_calibration"];
    fmt::format_to(out, "dynamic  quantized in memory ({}): DynamicQuantizeLinear per call, weights {}; {} nodes as "
                   "ConvInteger / MatMulInteger, {} kept in float\n",
                   kb(r["dynamic_model"]["bytes"]), c["weights"].get<std::string>(), c["quantized"].size(),
                   c["float_ops"].size());
  }

  // Columns: octet FP32, octet per quantized section; with --compare-ort the same for ORT.
  auto row = [&](const std::string& label, const std::vector<std::string>& octet, const std::vector<std::string>& theirs) {
    fmt::format_to(out, "{:<30}", label);
    for (const auto& c : octet) fmt::format_to(out, " {:>14}", c);
    if (ort)
      for (const auto& c : theirs) fmt::format_to(out, " {:>14}", c);
    fmt::format_to(out, "\n");
  };
  auto per_column = [&](auto cell) {
    std::vector<std::string> o{cell(f, "octet", true)}, t{cell(f, "ort", true)};
    for (const auto& [key, name] : quant) {
      o.push_back(cell(r[key], "octet", false));
      t.push_back(cell(r[key], "ort", false));
    }
    return std::pair{o, t};
  };
  auto emit = [&](const std::string& label, auto cell) {
    auto [o, t] = per_column(cell);
    row(label, o, t);
  };
  auto ms = [](const json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.3f}", v.get<double>()); };
  const int batch = r["batch"];
  fmt::format_to(out, "\n");
  {
    std::vector<std::string> o{"octet FP32"}, t{"ORT FP32"};
    for (const auto& q : quant) o.push_back("octet " + q.second), t.push_back("ORT " + q.second);
    row("", o, t);
  }
  for (const char* k : {"top1", "top5"})
    emit(k == std::string("top1") ? "top-1" : "top-5", [&](const json& sec, const char* engine, bool) {
      return sec.contains(engine) ? pct(sec[engine]["accuracy"][k]) : std::string();
    });
  emit("top-1 drop, points (FP32-INT8)", [&](const json& sec, const char* engine, bool is_fp32) -> std::string {
    if (is_fp32 || !f.contains(engine) || !sec.contains(engine)) return "";
    return fmt::format("{:.2f}", 100 * (f[engine]["accuracy"]["top1"].get<double>() -
                                        sec[engine]["accuracy"]["top1"].get<double>()));
  });
  emit("model size", [&](const json& sec, const char*, bool is_fp32) {
    return kb(is_fp32 ? r["file_bytes"] : sec["bytes"]);
  });
  for (int b : {1, batch}) {
    emit(fmt::format("P50 ms/image, batch {}", b),
         [&](const json& sec, const char* engine, bool) { return ms(p50(sec, b, engine)); });
    if (b == batch && batch == 1) break;
  }
  for (int b : {1, batch}) {
    emit(fmt::format("INT8 speed-up, batch {}", b), [&](const json& sec, const char* engine, bool is_fp32) -> std::string {
      if (is_fp32) return "";
      const json fp = p50(f, b, engine), i8 = p50(sec, b, engine);
      if (fp.is_null() || i8.is_null() || i8.get<double>() <= 0) return "-";
      return fmt::format("{:.2f}x", fp.get<double>() / i8.get<double>());
    });
    if (b == batch && batch == 1) break;
  }
  if (ort) {
    emit("top-1 agreement with ORT", [&](const json& sec, const char* engine, bool) -> std::string {
      if (std::string(engine) != "octet") return "";
      const auto& a = sec["agreement"];
      return fmt::format("{}/{}", a["same_top1"].get<int64_t>(), a["images"].get<int64_t>());
    });
    emit("max |octet - ORT|", [&](const json& sec, const char* engine, bool) -> std::string {
      if (std::string(engine) != "octet") return "";
      return fmt::format("{:.2g}", sec["agreement"]["max_abs_diff"].get<double>());
    });
    for (const auto& [key, name] : quant)
      if (r[key].contains("int8_logits"))
        fmt::format_to(out, "{}{}\n", quant.size() > 1 ? name + ": " : "", logits_line(r[key]["int8_logits"]));
    fmt::format_to(out, "(ORT {} runs the same files as octet)\n", f["ort"]["version"].get<std::string>());
  }
  fmt::format_to(out, "\nlatency: one thread, after warm-up; INT8 speed-up = FP32 P50 / INT8 P50 (above 1: INT8 is "
                 "faster).\nPer-class accuracy, every latency row and the per-batch figures are in --json.\n");
  return text;
}

void print_single_report(const json& r) { fmt::print("{}", single_report_text(r)); }
void print_side_by_side_report(const json& r) { fmt::print("{}", side_by_side_report_text(r)); }

}  // namespace octet::cli
