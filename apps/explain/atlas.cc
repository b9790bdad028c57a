#include "apps/explain/atlas.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "apps/explain/markup.h"

namespace octet::explain {
namespace atlas_page {

using json = nlohmann::json;

const char* const kInt8Precisions[] = {"int8_static", "int8_dynamic"};
const char* const kPrecisions[] = {"fp32", "int8_static", "int8_dynamic"};
constexpr size_t kReasonRows = 5;

std::string precision_label(const std::string& p) {
  if (p == "fp32") return "FP32";
  if (p == "int8_static") return "static INT8";
  if (p == "int8_dynamic") return "dynamic INT8";
  return p;
}

// An id for an HTML anchor: letters, digits, '-' and '_' only.
std::string anchor_part(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

std::string reason_anchor(const std::string& model, const std::string& precision, const std::string& isa) {
  return "r-" + anchor_part(model) + "-" + anchor_part(precision) + "-" + anchor_part(isa);
}

std::string model_anchor(const std::string& model) { return "m-" + anchor_part(model); }

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// The profile of `precision` at `isa` in an explain report, or nullptr.
const json* find_profile(const json& report, const std::string& precision, const std::string& isa) {
  if (!report.contains("profiles")) return nullptr;
  for (const auto& p : report["profiles"])
    if (p.value("precision", "") == precision && p.value("isa", "") == isa) return &p;
  return nullptr;
}

// Whether the heaviest INT8 step of a difference row that is neither a quantize step nor a
// relayout is a depthwise convolution.
bool main_step_is_depthwise(const json& row, const json* profile) {
  if (!profile || !row.contains("step_indices") || !profile->contains("steps")) return false;
  const json& steps = (*profile)["steps"];
  double heaviest = -1;
  bool depthwise = false;
  for (const auto& i : row["step_indices"].value("int8", json::array())) {
    const size_t k = i.get<size_t>();
    if (k >= steps.size()) continue;
    const std::string cat = steps[k].value("category", "");
    if (cat == "quantize" || cat == "dynamic_range" || cat == "layout") continue;
    const double us = steps[k].value("us", 0.0);
    if (us > heaviest) heaviest = us, depthwise = cat == "depthwise";
  }
  return depthwise;
}

double number_or(const json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

double number_or(const json& j, size_t index, double fallback) {
  return j.is_array() && index < j.size() && j[index].is_number() ? j[index].get<double>() : fallback;
}


std::string kind_of_reason(const std::string& reason, const std::string& precision, bool depthwise) {
  if (contains(reason, "scalar fallback")) return "scalar fallback";
  if (contains(reason, "runs in float")) return "runs in float";
  if (contains(reason, "quantization overhead"))
    return precision == "int8_dynamic" ? "dynamic-quantize cost" : "quantize overhead";
  if (contains(reason, "no integer dot")) return depthwise ? "depthwise, no dot product" : "no dot product";
  if (contains(reason, "memory-bound")) return depthwise ? "depthwise, memory-bound" : "memory-bound";
  if (contains(reason, "only in the INT8 plan")) return "INT8-only steps";
  return depthwise ? "depthwise, slower kernel" : "slower kernel";
}

json model_entry(const std::string& name, const json& report) {
  json m = {{"name", name}};
  if (report.contains("model")) {
    const json& model = report["model"];
    for (const char* k : {"macs_per_image", "parameters"})
      if (model.contains(k)) m[k] = model[k];
  }
  if (report.contains("seconds")) m["seconds"] = report["seconds"];

  // Cells: octet's rows by (level, batch, threads), ORT's by (batch, threads).
  using Key = std::tuple<std::string, int, int>;
  std::map<Key, json> octet_ms;
  std::map<std::pair<int, int>, json> ort_ms;
  std::vector<Key> order;
  for (const auto& row : report.value("speed", json::array())) {
    const int batch = row.value("batch", 0), threads = row.value("threads", 0);
    const std::string precision = row.value("precision", "");
    const double ms = number_or(row, "ms_per_image", 0.0);
    if (ms <= 0) continue;
    if (row.value("engine", "") == "ort") {
      ort_ms[{batch, threads}][precision] = ms;
      continue;
    }
    const Key key{row.value("isa", ""), batch, threads};
    if (!octet_ms.count(key)) order.push_back(key);
    octet_ms[key][precision] = ms;
  }
  json cells = json::array();
  for (const Key& key : order) {
    const auto& [isa, batch, threads] = key;
    const json& ms = octet_ms[key];
    json cell = {{"isa", isa}, {"batch", batch}, {"threads", threads}, {"ms", ms}};
    json speedup = json::object(), vs_ort = json::object();
    for (const char* p : kInt8Precisions)
      if (ms.contains("fp32") && ms.contains(p)) speedup[p] = ms["fp32"].get<double>() / ms[p].get<double>();
    cell["speedup"] = speedup;
    if (auto it = ort_ms.find({batch, threads}); it != ort_ms.end()) {
      cell["ort_ms"] = it->second;
      for (const char* p : kPrecisions)
        if (ms.contains(p) && it->second.contains(p)) vs_ort[p] = ms[p].get<double>() / it->second[p].get<double>();
      json ort_speedup = json::object();
      for (const char* p : kInt8Precisions)
        if (it->second.contains("fp32") && it->second.contains(p))
          ort_speedup[p] = it->second["fp32"].get<double>() / it->second[p].get<double>();
      cell["ort_speedup"] = ort_speedup;
    }
    cell["vs_ort"] = vs_ort;
    cells.push_back(std::move(cell));
  }
  m["cells"] = std::move(cells);

  // Reasons: per INT8 precision and level, the kind that loses the most time summed over the
  // report's "Where INT8 loses time" rows, and those rows.
  json reasons = json::array();
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& p : report.value("profiles", json::array()))
    if (p.value("precision", "") != "fp32") seen.insert({p.value("precision", ""), p.value("isa", "")});
  for (const auto& [precision, isa] : seen) {
    const json* profile = find_profile(report, precision, isa);
    const json* fp32 = find_profile(report, "fp32", isa);
    std::map<std::string, double> loss;
    json rows = json::array();
    bool measured = false;
    for (const auto& d : report.value("differences", json::array())) {
      if (d.value("precision", "") != precision || d.value("isa", "") != isa) continue;
      measured = true;
      const std::string reason = d.value("reason", "");
      const std::string kind = kind_of_reason(reason, precision, main_step_is_depthwise(d, profile));
      const double delta = number_or(d, "delta_us", 0.0);
      loss[kind] += std::max(0.0, delta);
      if (rows.size() < kReasonRows)
        rows.push_back({{"node", d.value("node", "")}, {"op", d.value("op", "")},
                        {"fp32_us", d.contains("fp32_us") ? d["fp32_us"] : json(nullptr)},
                        {"int8_us", d.contains("int8_us") ? d["int8_us"] : json(nullptr)},
                        {"delta_us", delta}, {"kind", kind}, {"reason", reason}});
    }
    json r = {{"precision", precision}, {"isa", isa}, {"anchor", reason_anchor(name, precision, isa)}};
    if (profile) r["int8_total_us"] = (*profile)["total_us"], r["int8_categories"] = (*profile)["categories"];
    if (fp32) r["fp32_total_us"] = (*fp32)["total_us"], r["fp32_categories"] = (*fp32)["categories"];
    if (!loss.empty()) {
      const auto top = std::max_element(loss.begin(), loss.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
      r["kind"] = top->first;
      r["loss_us"] = top->second;
      for (const auto& row : rows)
        if (row["kind"] == top->first) {
          r["text"] = row["reason"];
          break;
        }
      json by_kind = json::object();
      for (const auto& [k, us] : loss) by_kind[k] = us;
      r["loss_by_kind_us"] = by_kind;
    } else {
      r["kind"] = measured || profile ? "INT8 ahead on every node" : "not measured";
      r["text"] = measured || profile ? "no group of nodes takes longer in INT8 than in FP32 at batch 1"
                                      : "explain did not compare the plans at this level";
    }
    r["rows"] = std::move(rows);
    reasons.push_back(std::move(r));
  }
  m["reasons"] = std::move(reasons);
  if (report.contains("skipped")) m["skipped"] = report["skipped"];
  return m;
}

void check(const json& atlas, const std::string& what) {
  auto fail = [&](const std::string& why) { throw std::runtime_error(what + ": " + why); };
  if (!atlas.is_object()) fail("not a JSON object");
  if (atlas.value("schema", "") != "octet-atlas/1") fail("not an octet atlas (its \"schema\" is not \"octet-atlas/1\")");
  if (!atlas.contains("models") || !atlas["models"].is_array()) fail("\"models\" is missing or not a list");
  if (!atlas.contains("columns") || !atlas["columns"].is_array()) fail("\"columns\" is missing or not a list");
  for (size_t i = 0; i < atlas["models"].size(); ++i) {
    const json& m = atlas["models"][i];
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string())
      fail(fmt::format("models[{}]: expected an object with a \"name\"", i));
    for (const char* k : {"cells", "reasons"})
      if (!m.contains(k) || !m[k].is_array()) fail(fmt::format("models[{}].{}: expected a list", i, k));
    for (const auto& c : m["cells"])
      for (const char* k : {"speedup", "vs_ort", "ms"})
        if (c.contains(k) && !c[k].is_object()) fail(fmt::format("models[{}].cells: {} is not an object", i, k));
  }
  for (size_t i = 0; i < atlas["columns"].size(); ++i) {
    const json& c = atlas["columns"][i];
    if (!c.is_object() || !c.contains("isa") || !c.contains("batch") || !c.contains("threads"))
      fail(fmt::format("columns[{}]: expected isa, batch and threads", i));
  }
}


constexpr const char* kAtlasStyle = R"css(
:root { --ink: #1f2328; --muted: #5b636b; --rule: #d0d7de; --head: #f3f5f7; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1400px; padding: 24px 32px 48px; color: var(--ink); background: #fff;
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", Arial, sans-serif; }
header { border-bottom: 3px solid var(--ink); padding-bottom: 12px; margin-bottom: 8px; }
h1 { font-size: 26px; margin: 0 0 8px; } h2 { font-size: 20px; margin: 0 0 12px; }
h3 { font-size: 16px; margin: 20px 0 8px; } h4 { font-size: 14px; margin: 12px 0 4px; }
nav a { color: var(--ink); margin-right: 16px; font-size: 14px; }
section { border-top: 1px solid var(--rule); padding: 20px 0 8px; }
p.note { color: var(--muted); font-size: 13px; max-width: 70em; }
.nm { color: var(--muted); font-style: italic; }
code { font: 13px/1.3 "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; }
.scroll { overflow-x: auto; margin: 8px 0 12px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
thead th { background: var(--head); border-bottom: 2px solid var(--ink); white-space: nowrap; text-align: center; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.facts th { background: none; color: var(--muted); font-weight: normal; padding-left: 0; text-align: left; }
table.heat td.cell { padding: 0; border: 1px solid #fff; min-width: 84px; text-align: center; }
table.heat td.cell a { display: block; padding: 3px 4px; color: inherit; text-decoration: none; line-height: 1.25; }
table.heat td.cell a:hover { outline: 2px solid var(--ink); }
table.heat .v { font-weight: 600; font-variant-numeric: tabular-nums; }
table.heat .sub { display: block; font-size: 11px; opacity: 0.85; white-space: nowrap; }
table.heat th.model { text-align: left; white-space: nowrap; }
.legend span { display: inline-block; padding: 2px 8px; font-size: 12px; margin-right: 2px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 28px; } .pair > div { min-width: 0; }
.reason { margin: 8px 0 16px 12px; } .kind { font-weight: 600; }
footer { margin-top: 24px; color: var(--muted); font-size: 12px; }
)css";

// A diverging colour for a ratio centred on 1: blue above (INT8 faster), red below, white at 1,
// saturating at 4x either way (log scale). `higher_is_better` false flips the sides.
std::string heat_style(std::optional<double> v, bool higher_is_better = true) {
  if (!v || !std::isfinite(*v) || *v <= 0) return "background:#eceff1;color:#5b636b";
  double t = std::clamp(std::log(*v) / std::log(4.0), -1.0, 1.0);
  if (!higher_is_better) t = -t;
  const double a = std::pow(std::abs(t), 0.8);
  const int r0 = t >= 0 ? 33 : 178, g0 = t >= 0 ? 102 : 24, b0 = t >= 0 ? 172 : 43;
  auto mix = [&](int c) { return int(std::lround(255 + (c - 255) * a)); };
  return fmt::format("background:rgb({},{},{});color:{}", mix(r0), mix(g0), mix(b0), a > 0.55 ? "#fff" : "#1f2328");
}

std::optional<double> opt_number(const json& j, const std::string& key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

const json* find_cell(const json& model, const json& column) {
  for (const auto& c : model["cells"])
    if (c.value("isa", "") == column.value("isa", "") && c.value("batch", 0) == column.value("batch", 0) &&
        c.value("threads", 0) == column.value("threads", 0))
      return &c;
  return nullptr;
}

const json* find_reason(const json& model, const std::string& precision, const std::string& isa) {
  for (const auto& r : model["reasons"])
    if (r.value("precision", "") == precision && r.value("isa", "") == isa) return &r;
  return nullptr;
}

bool any_precision(const json& atlas, const std::string& precision) {
  for (const auto& m : atlas["models"])
    for (const auto& c : m["cells"])
      if (c.contains("speedup") && c["speedup"].contains(precision)) return true;
  return false;
}

std::string column_head(const json& columns) {
  // Two header rows: the level over its batch × threads columns.
  std::string top = "<tr><th rowspan=\"2\">model</th>", bottom = "<tr>";
  for (size_t i = 0; i < columns.size();) {
    size_t j = i;
    while (j < columns.size() && columns[j]["isa"] == columns[i]["isa"]) ++j;
    top += fmt::format("<th colspan=\"{}\">{}</th>", j - i, escape(columns[i].value("isa", "")));
    for (size_t k = i; k < j; ++k)
      bottom += fmt::format("<th>batch {}<br>{} thread{}</th>", columns[k].value("batch", 0),
                            columns[k].value("threads", 0), columns[k].value("threads", 0) == 1 ? "" : "s");
    i = j;
  }
  return "<thead>" + top + "</tr>" + bottom + "</tr></thead>";
}

// The heat map of one INT8 precision: INT8 ÷ FP32 per cell, octet ÷ ORT and the reason's kind
// under it, the cell linking to the reason.
std::string heat_map(const json& atlas, const std::string& precision) {
  const json& columns = atlas["columns"];
  std::string out = "<div class=\"scroll\"><table class=\"heat\">" + column_head(columns) + "<tbody>";
  for (const auto& m : atlas["models"]) {
    const std::string name = m.value("name", "");
    out += fmt::format("<tr><th class=\"model\"><a href=\"#{}\">{}</a></th>", model_anchor(name), escape(name));
    for (const auto& col : columns) {
      const json* cell = find_cell(m, col);
      const std::optional<double> v = cell ? opt_number((*cell)["speedup"], precision) : std::nullopt;
      const std::optional<double> ort =
          cell && cell->contains("vs_ort") ? opt_number((*cell)["vs_ort"], precision) : std::nullopt;
      const json* reason = find_reason(m, precision, col.value("isa", ""));
      const std::string kind = reason ? reason->value("kind", "not measured") : "not measured";
      const std::string text = reason ? reason->value("text", kind) : "explain did not compare the plans here";
      const std::string href = reason ? reason->value("anchor", model_anchor(name)) : model_anchor(name);
      std::string sub = ort ? "÷ORT " + format_sig(*ort, 2) : std::string("÷ORT —");
      out += fmt::format(
          "<td class=\"cell\" style=\"{}\"><a href=\"#{}\" title=\"{}\"><span class=\"v\">{}</span>"
          "<span class=\"sub\">{}</span><span class=\"sub\">{}</span></a></td>",
          heat_style(v), href, escape(kind + ": " + text), v ? format_sig(*v, 3) + "×" : "—", escape(sub), escape(kind));
    }
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

// octet ÷ ORT time at every batch and thread count of the best level, per precision, with
// ORT's own INT8 ÷ FP32 next to it.
std::string ort_map(const json& atlas) {
  const json& columns = atlas["columns"];
  if (columns.empty()) return "";
  const std::string best = columns.back().value("isa", "");
  json best_columns = json::array();
  for (const auto& c : columns)
    if (c.value("isa", "") == best) best_columns.push_back(c);
  std::string head = "<thead><tr><th rowspan=\"2\">model</th>";
  std::string sub = "<tr>";
  const std::vector<std::pair<std::string, std::string>> groups = {
      {"fp32", "octet ÷ ORT, FP32"}, {"int8_static", "octet ÷ ORT, static INT8"},
      {"int8_dynamic", "octet ÷ ORT, dynamic INT8"}, {"ort_static", "ORT static INT8 ÷ FP32"},
      {"ort_dynamic", "ORT dynamic INT8 ÷ FP32"}};
  for (const auto& [key, label] : groups) {
    head += fmt::format("<th colspan=\"{}\">{}</th>", best_columns.size(), label);
    for (const auto& c : best_columns)
      sub += fmt::format("<th>b{} t{}</th>", c.value("batch", 0), c.value("threads", 0));
  }
  std::string out = "<div class=\"scroll\"><table class=\"heat\">" + head + "</tr>" + sub + "</tr></thead><tbody>";
  for (const auto& m : atlas["models"]) {
    const std::string name = m.value("name", "");
    out += fmt::format("<tr><th class=\"model\"><a href=\"#{}\">{}</a></th>", model_anchor(name), escape(name));
    for (const auto& [key, label] : groups) {
      for (const auto& col : best_columns) {
        const json* cell = find_cell(m, col);
        std::optional<double> v;
        bool time_ratio = key.rfind("ort_", 0) != 0;
        if (cell && time_ratio && cell->contains("vs_ort")) v = opt_number((*cell)["vs_ort"], key);
        if (cell && !time_ratio && cell->contains("ort_speedup"))
          v = opt_number((*cell)["ort_speedup"], key == "ort_static" ? "int8_static" : "int8_dynamic");
        out += fmt::format("<td class=\"cell\" style=\"{}\"><a href=\"#{}\"><span class=\"v\">{}</span></a></td>",
                           heat_style(v, !time_ratio), model_anchor(name), v ? format_sig(*v, 3) : "—");
      }
    }
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

std::string legend(bool higher_is_better) {
  std::string out = "<p class=\"legend\">";
  for (double v : {0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0})
    out += fmt::format("<span style=\"{}\">{}</span>", heat_style(v, higher_is_better), format_short(v));
  return out + "</p>";
}

std::string machine_facts(const json& atlas) {
  const json machine = atlas.value("machine", json::object());
  auto row = [](const std::string& k, const std::string& v) {
    return "<tr><th>" + escape(k) + "</th><td>" + v + "</td></tr>";
  };
  std::string out = "<table class=\"facts\">";
  out += row("CPU", escape(machine.value("cpu", "unknown")));
  if (machine.contains("family"))
    out += row("family / model / stepping", escape(fmt::format("{} / {} / {}", machine.value("family", "?"),
                                                              machine.value("model", "?"), machine.value("stepping", "?"))));
  if (machine.contains("cores")) out += row("cores", escape(machine["cores"].dump()));
  if (machine.contains("load_average") && machine["load_average"].size() == 2)
    out += row("load average", escape(fmt::format("{} at the start, {} at the end (1 minute; above the core count, "
                                                  "other processes shared the cores and the times, the 2-thread "
                                                  "ones most, are slower than on a quiet machine)",
                                                  format_short(number_or(machine["load_average"], size_t{0}, 0.0)),
                                                  format_short(number_or(machine["load_average"], size_t{1}, 0.0)))));
  std::string flags;
  for (const auto& f : machine.value("flags", json::array())) flags += (flags.empty() ? "" : " ") + f.get<std::string>();
  if (!flags.empty()) out += row("vector flags", "<code>" + escape(flags) + "</code>");
  std::string levels;
  for (const auto& l : machine.value("isa_levels", json::array())) levels += (levels.empty() ? "" : ", ") + l.get<std::string>();
  out += row("ISA levels", escape(levels));
  for (const auto& p : machine.value("peaks", json::array()))
    out += row("peak at " + p.value("isa", ""),
               escape(fmt::format("FP32 {} GFLOP/s, INT8 {} GOP/s (build/bench/peak's loops)",
                                  format_sig(number_or(p, "f32_gflops", 0), 3), format_sig(number_or(p, "int8_gops", 0), 3))));
  out += row("ONNX Runtime", escape(machine.value("ort_version", "not measured")));
  out += row("date", escape(atlas.value("created", "")));
  out += row("octet", escape(atlas.value("octet_version", "") + " at commit " + atlas.value("commit", "unknown")));
  const json options = atlas.value("options", json::object());
  out += row("zoo", escape(options.value("zoo", "")) + (options.value("quick", false) ? " (--quick)" : ""));
  if (atlas.contains("seconds")) out += row("run time", escape(format_sig(atlas["seconds"].get<double>() / 60.0, 3) + " min"));
  for (const auto& s : atlas.value("skipped_models", json::array()))
    out += row("skipped", escape(s.value("name", "") + ": " + s.value("why", "")));
  return out + "</table>";
}

std::string categories_text(const json& cats) {
  std::string out;
  for (const auto& [k, v] : cats.items())
    if (v.is_number() && v.get<double>() > 0) out += (out.empty() ? "" : ", ") + k + " " + format_sig(v.get<double>(), 3);
  return out;
}

std::string reasons_section(const json& atlas) {
  std::string out;
  for (const auto& m : atlas["models"]) {
    const std::string name = m.value("name", "");
    out += fmt::format("<h3 id=\"{}\">{}</h3>", model_anchor(name), escape(name));
    std::string facts;
    if (m.contains("macs_per_image")) facts += format_count(m["macs_per_image"].get<int64_t>()) + " MACs per image";
    if (m.contains("parameters")) facts += ", " + format_count(m["parameters"].get<int64_t>()) + " parameters";
    if (!facts.empty()) out += "<p class=\"note\">" + escape(facts) + "</p>";
    for (const auto& s : m.value("skipped", json::array()))
      out += "<p class=\"note\">" +
             escape(fmt::format("not timed: {} at {}, batch {}, {} thread(s): one run would take about {} s",
                                precision_label(s.value("precision", "")), s.value("isa", ""), s.value("batch", 0),
                                s.value("threads", 0), format_sig(number_or(s, "estimated_run_seconds", 0), 2))) +
             "</p>";
    for (const auto& r : m["reasons"]) {
      const std::string precision = r.value("precision", ""), isa = r.value("isa", "");
      out += fmt::format("<div class=\"reason\" id=\"{}\"><h4>{} at {}: <span class=\"kind\">{}</span></h4>",
                         escape(r.value("anchor", "")), escape(precision_label(precision)), escape(isa),
                         escape(r.value("kind", "")));
      out += "<p>" + escape(r.value("text", "")) + "</p>";
      if (r.contains("fp32_total_us") && r.contains("int8_total_us"))
        out += "<p class=\"note\">" +
               escape(fmt::format("batch 1, one thread: FP32 {} µs ({}); {} {} µs ({})",
                                  format_sig(r["fp32_total_us"].get<double>()),
                                  categories_text(r.value("fp32_categories", json::object())),
                                  precision_label(precision), format_sig(r["int8_total_us"].get<double>()),
                                  categories_text(r.value("int8_categories", json::object())))) +
               "</p>";
      const json rows = r.value("rows", json::array());
      if (!rows.empty()) {
        out += "<div class=\"scroll\"><table><thead><tr><th>nodes</th><th>INT8 steps</th><th>FP32 µs</th>"
               "<th>INT8 µs</th><th>INT8 − FP32 µs</th><th>reason</th></tr></thead><tbody>";
        for (const auto& row : rows) {
          auto us = [&](const char* k) {
            return row.contains(k) && row[k].is_number() ? format_sig(row[k].get<double>())
                                                         : std::string("<span class=\"nm\">not measured</span>");
          };
          out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}"
                             "</td><td class=\"num\">{}</td><td><b>{}</b>: {}</td></tr>",
                             escape(row.value("node", "")), escape(row.value("op", "")), us("fp32_us"), us("int8_us"),
                             us("delta_us"), escape(row.value("kind", "")), escape(row.value("reason", "")));
        }
        out += "</tbody></table></div>";
      }
      out += "</div>";
    }
  }
  return out;
}

// A count of the cells where INT8 is faster, per precision and level: the page's first line.
std::string summary(const json& atlas) {
  std::string out;
  for (const char* p : kInt8Precisions) {
    std::map<std::string, std::pair<int, int>> by_isa;
    std::vector<std::string> order;
    for (const auto& m : atlas["models"])
      for (const auto& c : m["cells"])
        if (auto v = opt_number(c.value("speedup", json::object()), p)) {
          const std::string isa = c.value("isa", "");
          if (!by_isa.count(isa)) order.push_back(isa);
          by_isa[isa].second++;
          if (*v > 1.0) by_isa[isa].first++;
        }
    for (const auto& isa : order)
      out += "<li>" + escape(fmt::format("{} at {}: faster than FP32 in {} of {} cells", precision_label(p), isa,
                                         by_isa[isa].first, by_isa[isa].second)) +
             "</li>";
  }
  return out.empty() ? "" : "<ul>" + out + "</ul>";
}

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\"><title>" +
         escape(title) + "</title><style>" + kAtlasStyle + "</style></head><body>" + body +
         "<footer>octet atlas (docs/atlas.md): every number on this page is in its JSON.</footer></body></html>\n";
}

std::string atlas_title(const json& atlas) {
  return "octet paradox atlas: " + atlas.value("machine", json::object()).value("cpu", "unknown CPU");
}


std::string render_page(const json& atlas) {
  check(atlas, "atlas");
  std::string body = "<header><h1>" + escape(atlas_title(atlas)) + "</h1>" +
                     "<nav><a href=\"#heatmap\">heat map</a><a href=\"#ort\">octet ÷ ORT</a><a href=\"#reasons\">"
                     "reasons</a><a href=\"#machine\">machine</a></nav></header>";
  body += "<section id=\"heatmap\"><h2>INT8 ÷ FP32 speed-up</h2>" + summary(atlas) +
          "<p class=\"note\">Each cell: octet's FP32 time ÷ its INT8 time (above 1: INT8 is faster) for the model at "
          "that ISA level, batch and thread count; under it octet's INT8 time ÷ ONNX Runtime's on the same file and "
          "settings (below 1: octet is faster), and the kind of reason INT8 loses time at that level (from octet "
          "explain's profiles at batch 1, one thread). Each cell links to the reason and the rows it rests on.</p>" +
          legend(true);
  for (const char* p : kInt8Precisions)
    if (any_precision(atlas, p)) body += "<h3>" + escape(precision_label(p)) + " ÷ FP32</h3>" + heat_map(atlas, p);
  body += "</section>";
  body += "<section id=\"ort\"><h2>octet ÷ ONNX Runtime</h2><p class=\"note\">At the highest level: octet's time ÷ "
          "ORT's (below 1: octet is faster), and ORT's own INT8 ÷ FP32 speed-up for comparison.</p>" +
          legend(false) + ort_map(atlas) + "</section>";
  body += "<section id=\"reasons\"><h2>Reasons per model</h2>" + reasons_section(atlas) + "</section>";
  body += "<section id=\"machine\"><h2>Machine</h2>" + machine_facts(atlas) + "</section>";
  return page(atlas_title(atlas), body);
}

std::string render_comparison(const json& a, const json& b) {
  check(a, "atlas A");
  check(b, "atlas B");
  auto cpu = [](const json& x) { return x.value("machine", json::object()).value("cpu", "unknown CPU"); };
  std::string body = "<header><h1>" + escape("octet paradox atlas: " + cpu(a) + " vs " + cpu(b)) + "</h1></header>";
  body += "<section id=\"machine\"><h2>Machines</h2><div class=\"pair\"><div><h3>A</h3>" + machine_facts(a) +
          "</div><div><h3>B</h3>" + machine_facts(b) + "</div></div></section>";

  // The ratio of ratios over what both measured: B's INT8 ÷ FP32 over A's.
  json columns = json::array();
  for (const auto& c : a["columns"])
    for (const auto& d : b["columns"])
      if (c == d) columns.push_back(c);
  body += "<section id=\"ratio\"><h2>B's speed-up ÷ A's</h2><p class=\"note\">For the models and columns both "
          "atlases measured: above 1, INT8 pays more on B than on A.</p>" +
          legend(true);
  for (const char* p : kInt8Precisions) {
    if (!any_precision(a, p) || !any_precision(b, p)) continue;
    std::string t = "<h3>" + escape(precision_label(p)) + "</h3><div class=\"scroll\"><table class=\"heat\">" +
                    column_head(columns) + "<tbody>";
    for (const auto& ma : a["models"])
      for (const auto& mb : b["models"]) {
        if (ma["name"] != mb["name"]) continue;
        t += "<tr><th class=\"model\">" + escape(ma.value("name", "")) + "</th>";
        for (const auto& col : columns) {
          const json *ca = find_cell(ma, col), *cb = find_cell(mb, col);
          std::optional<double> va = ca ? opt_number((*ca)["speedup"], p) : std::nullopt;
          std::optional<double> vb = cb ? opt_number((*cb)["speedup"], p) : std::nullopt;
          const double fa = va.value_or(0.0), fb = vb.value_or(0.0);
          std::optional<double> r;
          if (fa > 0 && fb > 0) r = fb / fa;
          t += fmt::format("<td class=\"cell\" style=\"{}\"><a><span class=\"v\">{}</span><span class=\"sub\">{} → "
                           "{}</span></a></td>",
                           heat_style(r), r ? format_sig(*r, 3) : "—", fa > 0 ? format_sig(fa, 3) : "—",
                           fb > 0 ? format_sig(fb, 3) : "—");
        }
        t += "</tr>";
      }
    body += t + "</tbody></table></div>";
  }
  body += "</section>";
  body += "<section id=\"heatmap\"><h2>INT8 ÷ FP32 on each machine</h2><div class=\"pair\">";
  for (const json* x : {&a, &b}) {
    body += "<div><h3>" + escape(cpu(*x)) + "</h3>";
    for (const char* p : kInt8Precisions)
      if (any_precision(*x, p)) body += "<h4>" + escape(precision_label(p)) + "</h4>" + heat_map(*x, p);
    body += "</div>";
  }
  body += "</div></section>";
  return page("octet atlas: " + cpu(a) + " vs " + cpu(b), body);
}


}  // namespace atlas_page

std::string reason_kind(const std::string& reason, const std::string& precision, bool depthwise) {
  return atlas_page::kind_of_reason(reason, precision, depthwise);
}
nlohmann::json atlas_model(const std::string& name, const nlohmann::json& report) {
  return atlas_page::model_entry(name, report);
}
void check_atlas(const nlohmann::json& atlas, const std::string& what) { atlas_page::check(atlas, what); }
std::string render_atlas_html(const nlohmann::json& atlas) { return atlas_page::render_page(atlas); }
std::string render_atlas_comparison_html(const nlohmann::json& a, const nlohmann::json& b) {
  return atlas_page::render_comparison(a, b);
}

}  // namespace octet::explain
