#pragma once
// The `octet explain` page: one self-contained HTML file (inline CSS and SVG, no script, no
// external URL) rendered from the report's JSON alone (docs/explain.md, "octet-explain/1"), so a
// saved report re-renders to the same page. Sections, in order: verdict, speed, time, accuracy,
// recommendations, machine; each is a <section id="..."> with an <h2>.
//
// A field that is absent shows as "not measured"; a field of the wrong type throws
// std::runtime_error naming it ("report.speed[3].ms_per_image: expected a number").
#include <nlohmann/json.hpp>
#include <string>

namespace octet::explain {

std::string render_report_html(const nlohmann::json& report);

// Two machines side by side (e.g. x86 and Apple Silicon on the same model): every section shows
// both reports' tables and charts next to each other. Errors name "report_a..." or "report_b...".
std::string render_comparison_html(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace octet::explain
