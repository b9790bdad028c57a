#pragma once
// The six sections of the explain page, each rendered from one report as an HTML fragment
// (the section's body, without its <section> and <h2>): report_html.cc lays them out on a page
// of one machine or side by side for two.
#include <array>
#include <string>

#include "apps/explain/report_fields.h"

namespace octet::explain {

struct SectionInfo {
  const char* id;
  const char* title;
};
inline constexpr std::array<SectionInfo, 6> kSections{{{"verdict", "Verdict"},
                                                       {"speed", "Speed"},
                                                       {"time", "Where the time goes"},
                                                       {"accuracy", "Where the accuracy goes"},
                                                       {"recommendations", "Recommendations"},
                                                       {"machine", "Machine"}}};

// Checks the schema tag, then renders every section; charts are `chart_width` pixels wide.
std::array<std::string, kSections.size()> render_sections(const Field& report, int chart_width);

// The model's name, file, inputs, size and cost, for the page's header.
std::string render_model_summary(const Field& report);

// The marker every absent value shows as: "not measured", never 0 or NaN.
std::string not_measured();

// "int8_static" -> "INT8 static"; names the schema does not know are shown as they are.
std::string precision_name(const std::string& precision);
// fp32, int8_static, int8_dynamic, then the rest: the order of every precision list.
int precision_rank(const std::string& precision);

}  // namespace octet::explain
