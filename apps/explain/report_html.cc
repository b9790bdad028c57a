#include "apps/explain/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "apps/explain/markup.h"
#include "apps/explain/report_sections.h"

namespace octet::explain {
namespace {

// One machine's page is about 1100 px wide; two side by side get about half of it each, and
// their charts are drawn narrower instead of scaled down so their text stays legible.
constexpr int kChartWidth = 1100;
constexpr int kSideChartWidth = 540;

// Inline and printable: no web font (the reader's sans-serif), no image, no URL.
constexpr const char* kStyle = R"css(
:root { --ink: #1f2328; --muted: #5b636b; --rule: #d0d7de; --head: #f3f5f7; --flag: #fff1e0; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px 32px 48px; color: var(--ink); background: #fff;
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", Arial, sans-serif; }
header { border-bottom: 3px solid var(--ink); padding-bottom: 12px; margin-bottom: 8px; }
h1 { font-size: 26px; margin: 0 0 8px; }
h2 { font-size: 20px; margin: 0 0 12px; }
h3 { font-size: 16px; margin: 20px 0 8px; }
h3.side { margin-top: 0; padding: 4px 8px; background: var(--head); border-left: 4px solid var(--ink); }
nav { font-size: 14px; margin: 8px 0 0; }
nav a { color: var(--ink); margin-right: 16px; }
section { border-top: 1px solid var(--rule); padding: 20px 0 8px; }
header + section { border-top: none; }
dl.model { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 0; font-size: 14px; }
dl.model dt { color: var(--muted); }
dl.model dd { margin: 0; }
p.verdict { font-size: 17px; max-width: 62em; margin: 0; padding: 12px 16px; background: var(--head);
            border-left: 4px solid #0072B2; }
p.note, figcaption { color: var(--muted); font-size: 13px; }
.nm { color: var(--muted); font-style: italic; }
code { font: 13px/1.3 "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; }
.scroll { overflow-x: auto; margin: 8px 0 12px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
thead th { background: var(--head); border-bottom: 2px solid var(--ink); white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.flagged td { background: var(--flag); }
table.facts th { background: none; color: var(--muted); font-weight: normal; padding-left: 0; }
figure { margin: 12px 0; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid var(--rule); }
details { margin: 4px 0; font-size: 14px; }
summary { cursor: pointer; }
ol.recommendations li { margin: 0 0 8px; max-width: 62em; }
.effect { white-space: nowrap; padding: 0 6px; background: var(--head); border: 1px solid var(--rule);
          border-radius: 3px; font-size: 13px; }
.rec-id { color: var(--muted); font-size: 12px; }
.columns { display: flex; flex-wrap: wrap; gap: 8px 48px; align-items: flex-start; }
.columns h3 { margin-top: 0; }
.range, .flag { white-space: nowrap; }
.speedup { color: var(--muted); }
.op { color: var(--muted); font-size: 12px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 28px; }
.pair > div { min-width: 0; }
/* Names may wrap after their slashes only in a comparison's half-width tables. */
td code wbr { display: none; }
.pair td code wbr { display: inline; }
.pair table { font-size: 12px; }
.pair th, .pair td { padding: 3px 6px; }
.pair thead th { white-space: normal; }
.warning { padding: 8px 12px; border: 2px solid #D55E00; background: var(--flag); }
footer { margin-top: 24px; color: var(--muted); font-size: 12px; }
@media print {
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  h2, h3 { break-after: avoid; }
  figure, tr, .verdict, li { break-inside: avoid; }
  .scroll { overflow: visible; }
  table { font-size: 8.5pt; }
  th, td { padding: 2px 6px; }
  figure svg { border: none; }
  /* Paper cannot scroll a half-width table sideways: the two machines stack instead. */
  .pair { display: block; }
  .pair > div + div { margin-top: 16px; }
}
)css";

Field root(const nlohmann::json& j, const char* name) {
  if (!j.is_object()) throw std::runtime_error(fmt::format("{}: expected an object (an octet explain report)", name));
  return Field(j, name);
}

std::string model_name(const Field& report) {
  const auto name = report["model"]["name"].string();
  return name ? *name : report["model"]["path"].string().value_or("model");
}

std::string page(const std::string& title, const std::string& header, const std::string& body) {
  std::string nav;
  for (const auto& s : kSections) nav += fmt::format("<a href=\"#{}\">{}</a>", s.id, s.title);
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"octet explain\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n"
      "<header>\n{}<nav>{}</nav>\n</header>\n{}"
      "<footer>Rendered by octet explain from an octet-explain/1 report; every number on this page is in the "
      "report's JSON.</footer>\n</body>\n</html>\n",
      escape(title), kStyle, header, nav, body);
}

std::string section(const SectionInfo& s, const std::string& body) {
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", s.id, s.title, body);
}

// The fastest octet level per precision and batch, on each machine: the comparison's headline.
struct Best {
  double ms;
  std::string isa;
};
// Precision (in docs/explain.md's order, then by name) and batch.
using BestKey = std::tuple<int, std::string, int64_t>;
std::map<BestKey, Best> best_per_precision(const Field& report) {
  std::map<BestKey, Best> best;
  for (const auto& r : report["speed"].items()) {
    const auto ms = r["ms_per_image"].number();
    if (r["engine"].need_string() != "octet" || !ms) continue;
    const std::string precision = r["precision"].need_string();
    const BestKey key{precision_rank(precision), precision, r["batch"].need_integer()};
    const auto it = best.find(key);
    if (it == best.end() || *ms < it->second.ms) best[key] = {*ms, r["isa"].string().value_or("?")};
  }
  return best;
}

std::string best_table(const Field& a, const Field& b, const std::string& name_a, const std::string& name_b) {
  const auto best_a = best_per_precision(a), best_b = best_per_precision(b);
  std::map<BestKey, int> keys;
  for (const auto* m : {&best_a, &best_b})
    for (const auto& [k, v] : *m) keys[k];
  if (keys.empty()) return "";
  const auto cell = [](const auto& m, const auto& k) {
    const auto it = m.find(k);
    return it == m.end() ? not_measured()
                         : fmt::format("{} <span class=\"nm\">({})</span>", escape(format_sig(it->second.ms)),
                                       escape(it->second.isa));
  };
  std::string rows;
  for (const auto& [k, unused] : keys) {
    const auto ia = best_a.find(k), ib = best_b.find(k);
    const std::string ratio = ia != best_a.end() && ib != best_b.end() && ib->second.ms > 0
                                  ? escape(format_sig(ia->second.ms / ib->second.ms))
                                  : not_measured();
    rows += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        escape(precision_name(std::get<1>(k))), std::get<2>(k), cell(best_a, k), cell(best_b, k), ratio);
  }
  return fmt::format(
      "<h3>Fastest octet level on each machine</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>precision</th>"
      "<th class=\"num\">batch</th><th class=\"num\">A: {} ms/image</th><th class=\"num\">B: {} ms/image</th>"
      "<th class=\"num\">A ÷ B</th></tr></thead>\n<tbody>\n{}</tbody></table></div>\n"
      "<p class=\"note\">The fastest octet ISA level of each machine (in brackets) per precision and batch; A ÷ B "
      "above 1: B is faster.</p>\n",
      escape(name_a), escape(name_b), rows);
}

}  // namespace

std::string render_report_html(const nlohmann::json& json) {
  const Field report = root(json, "report");
  const auto bodies = render_sections(report, kChartWidth);
  std::string body;
  for (size_t i = 0; i < kSections.size(); ++i) body += section(kSections[i], bodies[i]);
  const std::string model = model_name(report);
  const std::string cpu = report["machine"]["cpu"].string().value_or("an unnamed CPU");
  const std::string header =
      fmt::format("<h1>Why INT8 is faster or slower: {}</h1>\n<p class=\"note\">measured on {}</p>\n{}", escape(model),
                  escape(cpu), render_model_summary(report));
  return page(fmt::format("octet explain: {} on {}", model, cpu), header, body);
}

std::string render_comparison_html(const nlohmann::json& json_a, const nlohmann::json& json_b) {
  const Field a = root(json_a, "report_a"), b = root(json_b, "report_b");
  const auto bodies_a = render_sections(a, kSideChartWidth), bodies_b = render_sections(b, kSideChartWidth);
  const std::string cpu_a = a["machine"]["cpu"].string().value_or("machine A");
  const std::string cpu_b = b["machine"]["cpu"].string().value_or("machine B");
  const std::string side_a = "A: " + cpu_a, side_b = "B: " + cpu_b;

  std::string body;
  for (size_t i = 0; i < kSections.size(); ++i) {
    std::string content;
    if (std::string(kSections[i].id) == "speed") content += best_table(a, b, cpu_a, cpu_b);
    content += fmt::format(
        "<div class=\"pair\">\n<div>\n<h3 class=\"side\">{}</h3>\n{}</div>\n<div>\n<h3 "
        "class=\"side\">{}</h3>\n{}</div>\n"
        "</div>\n",
        escape(side_a), bodies_a[i], escape(side_b), bodies_b[i]);
    body += section(kSections[i], content);
  }
  const std::string model_a = model_name(a), model_b = model_name(b);
  std::string header =
      fmt::format("<h1>Two machines: {}{}</h1>\n<p class=\"note\">A: {} &nbsp;·&nbsp; B: {}</p>\n", escape(model_a),
                  model_a == model_b ? "" : " and " + escape(model_b), escape(cpu_a), escape(cpu_b));
  // Paths differ between machines; the name and the parameter count do not, for one model.
  const auto params_a = a["model"]["parameters"].integer(), params_b = b["model"]["parameters"].integer();
  if (model_a != model_b || (params_a && params_b && *params_a != *params_b))
    header += "<p class=\"warning\">The two reports measure different models: their numbers do not compare.</p>\n";
  header += fmt::format("<div class=\"pair\">\n<div>{}</div>\n<div>{}</div>\n</div>\n", render_model_summary(a),
                        render_model_summary(b));
  return page(fmt::format("octet explain: {} on {} and {}", model_a, cpu_a, cpu_b), header, body);
}

}  // namespace octet::explain
