#include "apps/explain/report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "apps/explain/markup.h"
#include "apps/explain/svg.h"

namespace octet::explain {
namespace {

constexpr const char* kSchema = "octet-explain/1";

// docs/explain.md's categories, in the stacking order of the time charts.
constexpr const char* kCategories[] = {"dense",  "depthwise",   "quantize", "dynamic_range",
                                       "layout", "elementwise", "other"};
constexpr const char* kMethods[] = {"minmax", "percentile", "entropy", "mse"};
constexpr const char* kOptionOrder[] = {"mode",         "batches", "threads",     "data",        "images",     "calib",
                                        "calib_images", "method",  "activations", "per_channel", "compare_ort"};

std::string show(std::optional<double> v, std::string_view suffix = "") {
  return v ? escape(format_sig(*v)) + std::string(suffix) : not_measured();
}
std::string show_int(std::optional<int64_t> v) { return v ? fmt::format("{}", *v) : not_measured(); }
std::string show_count(std::optional<int64_t> v) { return v ? format_count(*v) : not_measured(); }
std::string show_text(const std::optional<std::string>& s) { return s ? escape(*s) : not_measured(); }
std::string show_percent(std::optional<double> v) { return v ? format_percent(*v) : not_measured(); }
// A node's or tensor's name: monospace, and free to wrap after each '/' (a comparison page's
// half-width tables would otherwise be pushed wider than their column).
std::string show_name(const std::optional<std::string>& name) {
  if (!name) return not_measured();
  std::string html = "<code>";
  for (char c : *name) html += c == '/' ? std::string("/<wbr>") : escape(std::string_view(&c, 1));
  return html + "</code>";
}
std::string short_number(const Field& f) { return f.number() ? escape(format_short(*f.number())) : not_measured(); }

// Lists of names and keys in the order they are first seen.
template <typename T>
void add_unique(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

void sort_precisions(std::vector<std::string>& names) {
  std::stable_sort(names.begin(), names.end(),
                   [](const std::string& a, const std::string& b) { return precision_rank(a) < precision_rank(b); });
}

// The ISA levels in the machine's order (lowest first); levels only the rows name come after.
class Levels {
 public:
  explicit Levels(const Field& report) {
    for (const auto& l : report["machine"]["isa_levels"].items()) order_.push_back(l.need_string());
  }
  size_t rank(const std::optional<std::string>& isa) const {
    if (!isa) return order_.size() + 1;  // ORT: no level of ours
    const auto it = std::find(order_.begin(), order_.end(), *isa);
    return it == order_.end() ? order_.size() : size_t(it - order_.begin());
  }
  const std::vector<std::string>& order() const { return order_; }

 private:
  std::vector<std::string> order_;
};

// A table whose numeric columns are right-aligned; cells are HTML (escaped by the caller).
class Table {
 public:
  struct Column {
    std::string title;
    bool numeric = false;
  };
  explicit Table(std::vector<Column> columns, std::string cls = "")
      : columns_(std::move(columns)), cls_(std::move(cls)) {}
  void row(const std::vector<std::string>& cells, const std::string& cls = "") {
    rows_ += cls.empty() ? "<tr>" : fmt::format("<tr class=\"{}\">", cls);
    for (size_t i = 0; i < cells.size(); ++i)
      rows_ += (i < columns_.size() && columns_[i].numeric ? "<td class=\"num\">" : "<td>") + cells[i] + "</td>";
    rows_ += "</tr>\n";
  }
  std::string html() const {
    std::string head;
    for (const auto& c : columns_) head += (c.numeric ? "<th class=\"num\">" : "<th>") + escape(c.title) + "</th>";
    return fmt::format(
        "<div class=\"scroll\"><table class=\"{}\">\n<thead><tr>{}</tr></thead>\n<tbody>\n{}</tbody></table></div>\n",
        cls_, head, rows_);
  }

 private:
  std::vector<Column> columns_;
  std::string cls_;
  std::string rows_;
};

std::string figure(const std::string& svg, const std::string& caption = "") {
  return fmt::format("<figure>\n{}{}</figure>\n", svg,
                     caption.empty() ? "" : fmt::format("<figcaption>{}</figcaption>\n", caption));
}
std::string note(const std::string& html) { return fmt::format("<p class=\"note\">{}</p>\n", html); }

std::string describe(const Field& f) {
  const auto text = f.any_text();
  return text ? escape(*text) : not_measured();
}

// One configuration of the speed table: a row per engine, level, batch and thread count.
struct Config {
  std::string engine;
  std::optional<std::string> isa;
  int64_t batch = 0;
  std::optional<int64_t> threads;
  bool operator==(const Config&) const = default;
};

struct SpeedRow {
  Config config;
  std::string precision;
  std::optional<double> value;
};

Config read_config(const Field& row) {
  return {row["engine"].need_string(), row["isa"].string(), row["batch"].need_integer(), row["threads"].integer()};
}

std::vector<SpeedRow> read_speed(const Field& list, const char* value_key) {
  std::vector<SpeedRow> rows;
  for (const auto& r : list.items())
    rows.push_back({read_config(r), r["precision"].need_string(), r[value_key].number()});
  return rows;
}

std::string level_name(const Config& c) {
  if (c.engine == "octet") return c.isa.value_or("?");
  return c.isa ? c.engine + " " + *c.isa : c.engine == "ort" ? "ONNX Runtime" : c.engine;
}

std::vector<std::string> precisions_of(const std::vector<SpeedRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) add_unique(out, r.precision);
  sort_precisions(out);
  return out;
}

const SpeedRow* find_row(const std::vector<SpeedRow>& rows, const Config& c, const std::string& precision) {
  for (const auto& r : rows)
    if (r.config == c && r.precision == precision) return &r;
  return nullptr;
}

std::string speed_table(const std::vector<SpeedRow>& speed, const std::vector<SpeedRow>& speedups,
                        const Levels& levels) {
  std::vector<Config> configs;
  for (const auto* rows : {&speed, &speedups})
    for (const auto& r : *rows) add_unique(configs, r.config);
  std::stable_sort(configs.begin(), configs.end(), [&](const Config& a, const Config& b) {
    return std::tuple(a.engine != "octet", levels.rank(a.isa), a.isa, a.batch, a.threads.value_or(0)) <
           std::tuple(b.engine != "octet", levels.rank(b.isa), b.isa, b.batch, b.threads.value_or(0));
  });
  const auto precisions = precisions_of(speed);
  // One thread count throughout (the usual case) is said once, below the table, not per row.
  const bool threads_vary = std::any_of(configs.begin(), configs.end(),
                                        [&](const Config& c) { return c.threads != configs.front().threads; });
  std::vector<Table::Column> columns{{"engine · level"}, {"batch", true}};
  if (threads_vary) columns.push_back({"threads", true});
  // An INT8 cell holds its time and, after it, its speed-up over FP32: two columns per INT8
  // precision would not fit beside the other machine's table on a comparison page.
  for (const auto& p : precisions)
    columns.push_back({precision_name(p) + (p == "fp32" ? " ms/image" : " ms/image (speed-up)"), true});
  Table t(columns, "speed");
  for (const auto& c : configs) {
    std::vector<std::string> cells{escape(level_name(c)), fmt::format("{}", c.batch)};
    if (threads_vary) cells.push_back(show_int(c.threads));
    for (const auto& p : precisions) {
      const SpeedRow* s = find_row(speed, c, p);
      const SpeedRow* u = p == "fp32" ? nullptr : find_row(speedups, c, p);
      std::string cell = s ? show(s->value) : not_measured();
      if (u && u->value) cell += fmt::format(" <span class=\"speedup\">({}×)</span>", escape(format_sig(*u->value)));
      cells.push_back(cell);
    }
    t.row(cells);
  }
  std::string html = t.html();
  const auto threads = configs.empty() ? std::nullopt : configs.front().threads;
  return html + note(fmt::format(
                    "Medians in milliseconds per image{}; the speed-up in brackets is FP32 ms ÷ INT8 ms at "
                    "the same level, batch and threads (above 1: INT8 is faster).",
                    threads_vary || !threads ? "" : fmt::format(", {} thread{}", *threads, *threads == 1 ? "" : "s")));
}

std::string speedup_chart(const std::vector<SpeedRow>& speedups, const Levels& levels, int width) {
  // Groups: precision and batch (and threads when they vary); series: the levels, then ORT.
  bool threads_vary = false;
  for (const auto& r : speedups) threads_vary |= r.config.threads != speedups.front().config.threads;
  using GroupKey = std::tuple<int, std::string, int64_t, int64_t>;
  std::map<GroupKey, std::string> group_names;
  std::vector<std::pair<size_t, std::string>> series_keys;  // (level rank, name)
  for (const auto& r : speedups) {
    std::string name = precision_name(r.precision) + ", batch " + std::to_string(r.config.batch);
    if (threads_vary) name += fmt::format(", {} threads", r.config.threads.value_or(0));
    group_names[{precision_rank(r.precision), r.precision, r.config.batch, r.config.threads.value_or(0)}] = name;
    const std::pair<size_t, std::string> s{
        r.config.engine == "octet" ? levels.rank(r.config.isa) : levels.order().size() + 2, level_name(r.config)};
    add_unique(series_keys, s);
  }
  std::sort(series_keys.begin(), series_keys.end());
  svg::GroupedBarChart chart;
  chart.title = "INT8 speed-up over FP32 per ISA level";
  chart.y_label = "FP32 ms ÷ INT8 ms";
  chart.value_suffix = "×";
  chart.reference = 1.0;
  chart.reference_label = "1.0: as fast as FP32 (above: INT8 faster)";
  chart.width = width;
  for (const auto& [key, name] : group_names) chart.groups.push_back(name);
  for (const auto& [rank, name] : series_keys) {
    svg::Series s{name, {}};
    for (const auto& [key, group] : group_names) {
      std::optional<double> v;
      for (const auto& r : speedups)
        if (level_name(r.config) == name && r.precision == std::get<1>(key) && r.config.batch == std::get<2>(key) &&
            r.config.threads.value_or(0) == std::get<3>(key))
          v = r.value;
      s.values.push_back(v);
    }
    chart.series.push_back(std::move(s));
  }
  return svg::grouped_bar_chart(chart);
}

std::string speed_section(const Field& report, int width) {
  const Levels levels(report);
  const auto speed = read_speed(report["speed"], "ms_per_image");
  const auto speedups = read_speed(report["speedups"], "speedup");
  std::string html;
  if (speed.empty() && speedups.empty()) return note("Speed: " + not_measured() + " (the report has no speed rows).");
  html += speed_table(speed, speedups, levels);
  if (speedups.empty())
    html += note("Speed-up chart: " + not_measured() + " (no speed-up rows).");
  else
    html += figure(speedup_chart(speedups, levels, width));
  return html;
}

// --- time ----------------------------------------------------------------------------------

struct Profile {
  Field field;
  std::string precision;
  std::optional<std::string> isa;
  int64_t batch;
  std::optional<int64_t> threads;
  std::string label() const { return fmt::format("{} · {}", isa.value_or("?"), precision_name(precision)); }
};

std::string steps_details(const Profile& p) {
  const auto steps = p.field["steps"].items();
  Table t({{"#", true},
           {"node"},
           {"op"},
           {"kernel"},
           {"category"},
           {"µs", true},
           {"MACs", true},
           {"GOP/s", true},
           {"of peak", true},
           {"scalar fallback"}});
  for (const auto& s : steps) {
    const bool scalar = s["scalar"].boolean().value_or(false);
    t.row({show_int(s["index"].integer()), show_name(s["node"].string()), show_text(s["op"].string()),
           show_text(s["kernel"].string()), show_text(s["category"].string()), show(s["us"].number()),
           show_count(s["macs"].integer()), show(s["gops"].number()), show_percent(s["peak_fraction"].number()),
           scalar ? "<strong class=\"flag\">yes: scalar kernel at a SIMD level</strong>" : ""},
          scalar ? "flagged" : "");
  }
  return fmt::format("<details>\n<summary>{}, batch {}: {} steps, {} µs</summary>\n{}</details>\n", escape(p.label()),
                     p.batch, steps.size(), show(p.field["total_us"].number()), t.html());
}

std::string time_section(const Field& report, int width) {
  const Levels levels(report);
  std::vector<Profile> profiles;
  for (const auto& f : report["profiles"].items())
    profiles.push_back(
        {f, f["precision"].need_string(), f["isa"].string(), f["batch"].need_integer(), f["threads"].integer()});
  std::stable_sort(profiles.begin(), profiles.end(), [&](const Profile& a, const Profile& b) {
    return std::tuple(a.batch, a.threads.value_or(0), levels.rank(a.isa), precision_rank(a.precision)) <
           std::tuple(b.batch, b.threads.value_or(0), levels.rank(b.isa), precision_rank(b.precision));
  });
  std::string html;
  if (profiles.empty()) html += note("Profiles: " + not_measured() + ".");

  // The categories of docs/explain.md in their order, then any others the report names.
  std::vector<std::string> segments(std::begin(kCategories), std::end(kCategories));
  for (const auto& p : profiles)
    for (const auto& [name, value] : p.field["categories"].members()) add_unique(segments, name);

  // One chart per batch (and thread count): a batch of 16 takes longer than one image, and
  // bars of both on one axis would squash the first.
  for (size_t i = 0; i < profiles.size();) {
    size_t end = i;
    while (end < profiles.size() && profiles[end].batch == profiles[i].batch &&
           profiles[end].threads == profiles[i].threads)
      ++end;
    svg::StackedBarChart chart;
    chart.title = fmt::format(
        "Time per category, batch {}{}", profiles[i].batch,
        profiles[i].threads ? fmt::format(", {} thread{}", *profiles[i].threads, *profiles[i].threads == 1 ? "" : "s")
                            : "");
    chart.x_label = fmt::format("µs per batch of {} (sum of the step medians)", profiles[i].batch);
    chart.unit = "µs";
    chart.segments = segments;
    chart.width = width;
    std::vector<std::string> unmeasured;
    for (size_t j = i; j < end; ++j) {
      const Field categories = profiles[j].field["categories"];
      if (!categories.present()) {
        unmeasured.push_back(escape(profiles[j].label()));
        continue;
      }
      svg::StackedBar bar{profiles[j].label(), {}};
      for (const auto& name : segments) bar.values.push_back(categories[name].number().value_or(0.0));
      chart.bars.push_back(std::move(bar));
    }
    std::string caption;
    if (!unmeasured.empty()) {
      caption = "Categories " + not_measured() + " for: ";
      for (size_t k = 0; k < unmeasured.size(); ++k) caption += (k ? ", " : "") + unmeasured[k];
    }
    if (!chart.bars.empty())
      html += figure(svg::stacked_bar_chart(chart), caption);
    else
      html += note(caption);
    i = end;
  }

  html += "<h3>Where INT8 loses time</h3>\n";
  const auto differences = report["differences"].items();
  if (differences.empty()) {
    html += note(report["differences"].present() ? "No step is slower in INT8 than in FP32."
                                                 : "Differences: " + not_measured() + ".");
  } else {
    // A row is a group of nodes both plans run in whole steps (docs/explain.md, "Reasons").
    Table t({{"precision · level"}, {"nodes"}, {"steps INT8 / FP32", true}, {"FP32 µs", true}, {"INT8 µs", true},
             {"Δ µs", true}, {"reason"}});
    for (const auto& d : differences) {
      const auto delta = d["delta_us"].number();
      const auto int8_steps = d["int8_steps"].integer(), fp32_steps = d["fp32_steps"].integer();
      t.row({escape(precision_name(d["precision"].string().value_or("?")) + " · " + d["isa"].string().value_or("?")),
             show_name(d["node"].string()),
             int8_steps && fp32_steps ? fmt::format("{} / {}", *int8_steps, *fp32_steps) : not_measured(),
             show(d["fp32_us"].number()), show(d["int8_us"].number()),
             delta ? (*delta > 0 ? "+" : "") + escape(format_sig(*delta)) : not_measured(),
             show_text(d["reason"].string())});
    }
    html += t.html();
  }
  if (!profiles.empty()) {
    html += "<h3>Steps of each profile</h3>\n";
    for (const auto& p : profiles) html += steps_details(p);
  }
  return html;
}

// --- accuracy --------------------------------------------------------------------------------

std::string range_text(const Field& f) {
  const auto items = f.items();
  if (items.empty()) return not_measured();
  if (items.size() != 2) f.fail("expected [low, high]");
  return fmt::format("<span class=\"range\">[{}, {}]</span>", short_number(items[0]), short_number(items[1]));
}

std::string accuracy_summary(const Field& acc) {
  const Field top1 = acc["top1"], agreement = acc["agreement"];
  std::vector<std::string> precisions;
  for (const Field* f : {&top1, &agreement})
    for (const auto& [name, value] : f->members()) add_unique(precisions, name);
  sort_precisions(precisions);
  std::string html = fmt::format("<p>Measured on {} images.", show_count(acc["images"].integer()));
  if (!top1.present()) html += " Top-1 accuracy: " + not_measured() + " (the data has no labels).";
  html += "</p>\n";
  if (precisions.empty()) return html + note("Top-1 and agreement: " + not_measured() + ".");
  Table t({{"precision"}, {"top-1", true}, {"top-1 agrees with FP32", true}});
  for (const auto& p : precisions)
    t.row({escape(precision_name(p)), show_percent(top1[p].number()),
           p == "fp32" ? "(reference)" : show_percent(agreement[p].number())});
  return html + t.html();
}

std::string sqnr_chart(const std::vector<Field>& tensors, int width) {
  svg::PointChart chart;
  chart.title = "SQNR of each quantized tensor, in graph order (higher is better)";
  chart.x_label = "tensor # (graph order; see the table below)";
  chart.y_label = "SQNR (dB)";
  chart.value_suffix = " dB";
  chart.marked_name = "culprit";
  chart.missing_reason = "infinite SQNR: exact in INT8";
  chart.width = width;
  for (const auto& t : tensors)
    chart.points.push_back(
        {t["name"].string().value_or("?"), t["sqnr_db"].number(), t["culprit"].boolean().value_or(false)});
  return svg::point_chart(chart);
}

std::string tensor_tables(const std::vector<Field>& tensors) {
  Table errors({{"#", true},
                {"tensor"},
                {"producer"},
                {"scale", true},
                {"zero point", true},
                {"SQNR dB", true},
                {"SQNR drop dB", true},
                {"clip rate", true},
                {"culprit"}},
               "tensors");
  std::vector<std::string> methods(std::begin(kMethods), std::end(kMethods));
  for (const auto& t : tensors)
    for (const auto& [name, value] : t["methods"].members()) add_unique(methods, name);
  std::vector<Table::Column> range_columns{{"#", true}, {"tensor"}, {"the model's range"}};
  for (const auto& m : methods) range_columns.push_back({m});
  Table ranges(range_columns, "ranges");

  for (size_t i = 0; i < tensors.size(); ++i) {
    const Field& t = tensors[i];
    const bool culprit = t["culprit"].boolean().value_or(false);
    const auto sqnr = t["sqnr_db"].number();
    const auto op = t["op"].string();
    const std::string index = fmt::format("{}", i), name = show_name(t["name"].string());
    errors.row(
        {index, name, show_name(t["producer"].string()) + (op ? " <span class=\"op\">" + escape(*op) + "</span>" : ""),
         show(t["scale"].number()), show_int(t["zero_point"].integer()),
         // docs/explain.md: sqnr_db is absent exactly when the error is zero.
         sqnr ? escape(format_sig(*sqnr)) : "∞ (exact)", show(t["sqnr_drop_db"].number()),
         show_percent(t["clip_rate"].number()), culprit ? "<strong class=\"flag\">◆ culprit</strong>" : ""},
        culprit ? "flagged" : "");
    std::vector<std::string> cells{index, name, range_text(t["range"])};
    for (const auto& m : methods) cells.push_back(range_text(t["methods"][m]));
    ranges.row(cells, culprit ? "flagged" : "");
  }
  return errors.html() + "<h3>Ranges: the model's and each calibration method's</h3>\n" + ranges.html();
}

// The schema leaves its shape open: a tensor's name, or an object that has one among other facts.
std::string first_difference(const Field& f) {
  if (f.is_string()) return show_name(f.string());
  const Field name = f["name"];
  std::string out = name.present() ? show_name(name.any_text()) : "";
  for (const auto& [key, value] : f.members())
    if (key != "name") out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", escape(key), describe(value));
  return out;
}

std::string ort_comparison(const Field& acc) {
  std::string html = "<h3>octet INT8 against ONNX Runtime</h3>\n";
  const auto ort = acc["ort"].items();
  if (!acc["ort"].present()) return html + note("ORT comparison: " + not_measured() + " (run with --compare-ort).");
  Table t({{"tensor"}, {"identical values", true}, {"max difference (LSB)", true}});
  for (const auto& r : ort) {
    const auto identical = r["identical"].number();
    t.row({show_name(r["name"].string()), show_percent(identical), show_int(r["max_lsb"].integer())},
          identical && *identical < 1.0 ? "flagged" : "");
  }
  html += t.html();
  const Field first = acc["first_difference"];
  html += first.present() ? "<p>First difference: " + first_difference(first) + "</p>\n"
                          : note("First difference: none reported.");
  return html;
}

std::string accuracy_section(const Field& report, int width) {
  const Field acc = report["accuracy"];
  if (!acc.present())
    return note("Accuracy: " + not_measured() +
                ". The report has no accuracy section: no data set was given or found "
                "(<code>octet explain MODEL --data fashion-mnist:test</code> measures it).");
  std::string html = accuracy_summary(acc);
  const auto tensors = acc["tensors"].items();
  if (tensors.empty()) {
    html += note("Per-tensor SQNR: " + not_measured() + ".");
  } else {
    html += figure(sqnr_chart(tensors, width),
                   "SQNR: signal-to-quantization-noise ratio of the INT8 tensor against FP32. Culprits (◆) lose the "
                   "most SQNR against their own quantized inputs.");
    html += tensor_tables(tensors);
  }
  return html + ort_comparison(acc);
}

// --- the rest ------------------------------------------------------------------------------

std::string recommendations_section(const Field& report) {
  const auto recs = report["recommendations"].items();
  if (recs.empty())
    return note(report["recommendations"].present() ? "None: nothing to change."
                                                    : "Recommendations: " + not_measured() + ".");
  std::string html = "<ol class=\"recommendations\">\n";
  for (const auto& r : recs) {
    html += "<li>" + escape(r["text"].need_string());
    const Field effect = r["effect"];
    if (effect.present())
      html += fmt::format(" <span class=\"effect\">{}: {} → {}</span>", show_text(effect["metric"].string()),
                          short_number(effect["from"]), short_number(effect["to"]));
    if (const auto id = r["id"].string()) html += fmt::format(" <span class=\"rec-id\">[{}]</span>", escape(*id));
    html += "</li>\n";
  }
  return html + "</ol>\n";
}

std::string machine_section(const Field& report) {
  const Field m = report["machine"];
  std::string levels;
  for (const auto& l : m["isa_levels"].items()) levels += (levels.empty() ? "" : ", ") + escape(l.need_string());
  std::string html = "<div class=\"columns\">\n<div>\n<h3>CPU and versions</h3>\n<table class=\"facts\"><tbody>\n";
  const auto fact = [&](const char* name, const std::string& value) {
    html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, value);
  };
  fact("CPU", show_text(m["cpu"].string()));
  fact("architecture", show_text(m["arch"].string()));
  fact("cores", show_int(m["cores"].integer()));
  fact("ISA levels (lowest first)", levels.empty() ? not_measured() : levels);
  fact("octet", show_text(m["octet_version"].string()));
  fact("ONNX Runtime", show_text(m["ort_version"].string()));
  fact("report written", show_text(report["created"].string()));
  html += "</tbody></table>\n</div>\n<div>\n<h3>Measured peaks (one core)</h3>\n";
  const auto peaks = m["peaks"].items();
  if (peaks.empty()) {
    html += note("Peaks: " + not_measured() + ".");
  } else {
    Table t({{"level"}, {"FP32 GFLOP/s", true}, {"INT8 GOP/s", true}});
    for (const auto& p : peaks)
      t.row({show_text(p["isa"].string()), show(p["f32_gflops"].number()), show(p["int8_gops"].number())});
    html += t.html();
  }
  html += "</div>\n<div>\n<h3>Options</h3>\n";
  auto options = report["options"].members();
  if (options.empty()) return html + note("Options: " + not_measured() + ".") + "</div>\n</div>\n";
  // docs/explain.md's order (what was run, on which data, how it was calibrated), then the rest.
  const auto rank = [](const std::string& key) {
    return size_t(std::find(std::begin(kOptionOrder), std::end(kOptionOrder), key) - std::begin(kOptionOrder));
  };
  std::stable_sort(options.begin(), options.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  html += "<table class=\"facts\"><tbody>\n";
  for (const auto& [name, value] : options) fact(escape(name).c_str(), describe(value));
  return html + "</tbody></table>\n</div>\n</div>\n";
}

}  // namespace

std::string not_measured() { return "<span class=\"nm\">not measured</span>"; }

int precision_rank(const std::string& p) {
  return p == "fp32" ? 0 : p == "int8_static" ? 1 : p == "int8_dynamic" ? 2 : 3;
}

std::string precision_name(const std::string& p) {
  if (p == "fp32") return "FP32";
  if (p == "int8_static") return "INT8 static";
  if (p == "int8_dynamic") return "INT8 dynamic";
  return p;
}

std::string render_model_summary(const Field& report) {
  const Field model = report["model"];
  std::string inputs;
  for (const auto& in : model["inputs"].items()) {
    std::string dims;
    for (const auto& d : in["dims"].items()) {
      const auto v = d.integer();
      dims += (dims.empty() ? "" : "×") + (v && *v >= 0 ? std::to_string(*v) : std::string("N"));
    }
    inputs += fmt::format("{}<code>{}</code> {} {}", inputs.empty() ? "" : ", ", show_text(in["name"].string()),
                          escape(dims), show_text(in["dtype"].string()));
  }
  std::string sizes;
  auto size_fields = model["size_bytes"].members();
  std::stable_sort(size_fields.begin(), size_fields.end(),
                   [](const auto& a, const auto& b) { return precision_rank(a.first) < precision_rank(b.first); });
  for (const auto& [name, value] : size_fields) {
    const auto bytes = value.number();
    sizes += fmt::format("{}{} {}", sizes.empty() ? "" : ", ", escape(precision_name(name)),
                         bytes ? escape(format_sig(*bytes / 1024.0)) + " KB" : not_measured());
  }
  return fmt::format(
      "<dl class=\"model\">\n<dt>file</dt><dd><code>{}</code></dd>\n<dt>inputs</dt><dd>{}</dd>\n"
      "<dt>parameters</dt><dd>{}</dd>\n<dt>MACs per image</dt><dd>{}</dd>\n<dt>size</dt><dd>{}</dd>\n</dl>\n",
      show_text(model["path"].string()), inputs.empty() ? not_measured() : inputs,
      show_count(model["parameters"].integer()), show_count(model["macs_per_image"].integer()),
      sizes.empty() ? not_measured() : sizes);
}

std::array<std::string, kSections.size()> render_sections(const Field& report, int chart_width) {
  const std::string schema = report["schema"].need_string();
  if (schema != kSchema)
    report["schema"].fail(
        fmt::format("expected \"{}\", got \"{}\": not an octet explain report of this version", kSchema, schema));
  const auto verdict = report["verdict"].string();
  return {verdict ? "<p class=\"verdict\">" + escape(*verdict) + "</p>\n" : note("Verdict: " + not_measured() + "."),
          speed_section(report, chart_width),
          time_section(report, chart_width),
          accuracy_section(report, chart_width),
          recommendations_section(report),
          machine_section(report)};
}

}  // namespace octet::explain
