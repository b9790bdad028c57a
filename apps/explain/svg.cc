#include "apps/explain/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "apps/explain/markup.h"

namespace octet::explain::svg {
namespace {

constexpr int kFont = 12;       // labels and ticks
constexpr int kTitleFont = 14;  // the chart's title
constexpr int kSmallFont = 10;  // labels under and inside bars
constexpr const char* kInk = "#222";
constexpr const char* kGrid = "#ddd";
constexpr const char* kMuted = "#666";
// A white outline under a label, so it reads where it crosses a line or a grid.
constexpr const char* kHalo = " stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\"";

// The width of a label in pixels, for layout only: SVG text cannot be measured before it is drawn,
// so this over-estimates a sans-serif face (0.6 em a character; UTF-8 continuation bytes skipped).
double text_width(const std::string& s, int font) {
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return 0.6 * font * double(chars);
}

// Labels longer than `max` characters end in an ellipsis (the tooltip keeps the whole text).
std::string shorten(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not mid-character
  return s.substr(0, cut) + "…";
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

// Black or white text, whichever reads on `fill` (a #rrggbb colour).
const char* text_on(const char* fill) {
  const auto channel = [&](int i) { return std::stoi(std::string(fill + 1 + 2 * i, 2), nullptr, 16); };
  const double luma = 0.299 * channel(0) + 0.587 * channel(1) + 0.114 * channel(2);
  return luma > 140 ? "#000" : "#fff";
}

class Canvas {
 public:
  Canvas(int width, int height, const std::string& title)
      : width_(std::max(width, 240)), height_(std::max(height, 120)), title_(title) {}
  int width() const { return width_; }
  int height() const { return height_; }

  void text(double x, double y, const std::string& s, const char* anchor = "start", int font = kFont,
            const std::string& extra = "") {
    body_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"{}\"{}>{}</text>\n", num(x), num(y),
                         anchor, font, extra, escape(s));
  }
  void line(double x1, double y1, double x2, double y2, const char* stroke, const std::string& extra = "") {
    body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"{}/>\n", num(x1), num(y1), num(x2),
                         num(y2), stroke, extra);
  }
  // A filled rectangle with a tooltip.
  void rect(double x, double y, double w, double h, const char* fill, const std::string& cls,
            const std::string& tooltip) {
    body_ += fmt::format(
        "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" "
        "stroke-width=\"0.5\"><title>{}</title></rect>\n",
        cls, num(x), num(y), num(std::max(w, 0.0)), num(std::max(h, 0.0)), fill, kInk, escape(tooltip));
  }
  void raw(const std::string& s) { body_ += s; }

  std::string finish() const {
    return fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" "
        "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\" font-family=\"sans-serif\" fill=\"{3}\">\n"
        "<title>{2}</title>\n"
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n"
        "<text x=\"8\" y=\"20\" font-size=\"{4}\" font-weight=\"bold\">{2}</text>\n{5}</svg>\n",
        width_, height_, escape(title_), kInk, kTitleFont, body_);
  }

 private:
  int width_, height_;
  std::string title_;
  std::string body_;
};

// A linear map from data to pixels.
struct Scale {
  double d0, d1, p0, p1;
  double operator()(double v) const { return p0 + (v - d0) / (d1 - d0) * (p1 - p0); }
};

std::string tick_label(const Ticks& t, double v) { return fmt::format("{:.{}f}", v, t.decimals); }

// Horizontal grid lines and labels of a vertical value axis, and its rotated title.
void value_axis_y(Canvas& c, const Ticks& t, const Scale& y, double x0, double x1, const std::string& label) {
  for (double v : t.values) {
    c.line(x0, y(v), x1, y(v), kGrid);
    c.text(x0 - 6, y(v) + 4, tick_label(t, v), "end", kFont, " class=\"tick\"");
  }
  const double mid = (y.p0 + y.p1) / 2;
  c.text(14, mid, label, "middle", kFont, fmt::format(" transform=\"rotate(-90 14 {})\"", num(mid)));
}

// Where a legend ended: the next item goes at (x, y).
struct Cursor {
  double x, y;
};

// Swatches and names in rows from (x, y), wrapping before `right`.
Cursor legend(Canvas& c, double x, double y, double right, const std::vector<std::string>& names) {
  const double x_start = x;
  for (size_t i = 0; i < names.size(); ++i) {
    const double w = 18 + text_width(names[i], kFont) + 14;
    if (x + w > right && x > x_start) {
      x = x_start;
      y += 18;
    }
    c.rect(x, y - 10, 12, 12, palette(i), "swatch", names[i]);
    c.text(x + 17, y, names[i]);
    x += w;
  }
  return {x, y};
}

}  // namespace

Ticks nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) hi = lo + (lo == 0 ? 1 : std::fabs(lo));
  const double raw = (hi - lo) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double mantissa = 10;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (raw <= m * magnitude * (1 + 1e-9)) {
      mantissa = m;
      break;
    }
  Ticks t;
  t.step = mantissa * magnitude;
  // Values as integer multiples of the step, so 0.1 + 0.2 never becomes a tick of 0.30000000004.
  const double k0 = std::floor(lo / t.step + 1e-9), k1 = std::ceil(hi / t.step - 1e-9);
  for (double k = k0; k <= k1; ++k) t.values.push_back(k * t.step == 0 ? 0.0 : k * t.step);
  t.decimals = std::max(0, -int(std::floor(std::log10(t.step) + 1e-9)) + (mantissa == 2.5 ? 1 : 0));
  return t;
}

const char* palette(size_t i) {
  static constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                             "#56B4E9", "#D55E00", "#F0E442", "#999999"};
  return kColours[i % std::size(kColours)];
}

std::string grouped_bar_chart(const GroupedBarChart& chart) {
  double lo = 0, hi = 0;
  bool missing = false;
  std::vector<std::string> names;
  for (const auto& s : chart.series) {
    names.push_back(s.name);
    for (const auto& v : s.values) {
      if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
      missing |= !v;
    }
  }
  if (chart.reference) lo = std::min(lo, *chart.reference), hi = std::max(hi, *chart.reference);

  // The legend: the series, the reference line's meaning (a sample of the dashes, not a label
  // on the plot where it could cover a bar), and what n/m stands for. Laid out once on a scratch
  // canvas to know how many rows it takes.
  const int width = std::max(chart.width, 240);
  const double left = 64, right = width - 16, legend_right = right - (missing ? 130 : 0);
  const std::string dashed = " stroke-width=\"1.5\" stroke-dasharray=\"6 4\"";
  const auto draw_legend = [&](Canvas& on, double y) {
    Cursor at = legend(on, left, y, legend_right, names);
    if (chart.reference && !chart.reference_label.empty()) {
      if (at.x + 34 + text_width(chart.reference_label, kFont) > legend_right && at.x > left) at = {left, at.y + 18};
      on.line(at.x, at.y - 4, at.x + 28, at.y - 4, kInk, dashed);
      on.text(at.x + 34, at.y, chart.reference_label);
    }
    if (missing) on.text(right, at.y, "n/m: not measured", "end", kFont, fmt::format(" fill=\"{}\"", kMuted));
    return at;
  };
  Canvas scratch(width, 120, "");
  const double extra_rows = draw_legend(scratch, 0).y / 18;
  const size_t n_groups = std::max<size_t>(chart.groups.size(), 1), n_series = std::max<size_t>(chart.series.size(), 1);
  const double group_w = (right - left) / double(n_groups);
  const double bar_w = std::min(group_w * 0.8 / double(n_series), 90.0);
  const bool labels_fit = std::all_of(chart.series.begin(), chart.series.end(),
                                      [&](const Series& s) { return text_width(s.name, kSmallFont) <= bar_w + 4; });
  // Group names too wide for their group break after their last comma ("INT8 static," / "batch 16").
  std::vector<std::pair<std::string, std::string>> group_lines;
  bool two_lines = false;
  for (const auto& g : chart.groups) {
    const size_t comma = g.rfind(", ");
    if (text_width(g, kFont) > group_w - 6 && comma != std::string::npos) {
      group_lines.emplace_back(g.substr(0, comma + 1), g.substr(comma + 2));
      two_lines = true;
    } else {
      group_lines.emplace_back(g, "");
    }
  }
  // Value labels wider than their bar stand upright above it, and need more room up there.
  double value_w = 0;
  for (const auto& s : chart.series)
    for (const auto& v : s.values)
      if (v) value_w = std::max(value_w, text_width(format_sig(*v) + chart.value_suffix, kSmallFont));
  const bool upright = value_w > bar_w - 2;

  Canvas c(width, chart.height + int(extra_rows * 18) + (two_lines ? 14 : 0), chart.title);
  const double top = 40, bottom = c.height() - 62 - extra_rows * 18 - (two_lines ? 14 : 0);
  // Headroom above the highest bar for its label, in data units.
  const double label_px = upright ? value_w + 8 : 16;
  const double span = std::max(hi - lo, 1e-9);
  const Ticks t = nice_ticks(lo, hi + span * label_px / std::max(bottom - top - label_px, 1.0));
  const Scale y{t.first(), t.last(), bottom, top};
  value_axis_y(c, t, y, left, right, chart.y_label);

  for (size_t g = 0; g < chart.groups.size(); ++g) {
    const double x_group = left + group_w * double(g);
    const double x_bars = x_group + (group_w - bar_w * double(n_series)) / 2;
    for (size_t s = 0; s < chart.series.size(); ++s) {
      const double x = x_bars + bar_w * double(s), xc = x + bar_w / 2;
      const auto& v = g < chart.series[s].values.size() ? chart.series[s].values[g] : std::nullopt;
      if (v) {
        const std::string value = format_sig(*v) + chart.value_suffix;
        c.rect(x + 1, std::min(y(*v), y(0)), bar_w - 2, std::fabs(y(*v) - y(0)), palette(s), "bar",
               chart.groups[g] + ", " + chart.series[s].name + ": " + value);
        if (upright) {
          const double ty = *v >= 0 ? y(*v) - 4 : y(0) - 4;
          c.text(xc + 3, ty, value, "start", kSmallFont,
                 fmt::format("{} transform=\"rotate(-90 {} {})\"", kHalo, num(xc + 3), num(ty)));
        } else {
          c.text(xc, *v >= 0 ? y(*v) - 4 : y(*v) + 12, value, "middle", kSmallFont, kHalo);
        }
      } else {
        c.text(xc, y(0) - 4, "n/m", "middle", kSmallFont, fmt::format(" fill=\"{}\"", kMuted));
      }
      if (labels_fit) c.text(xc, bottom + 13, chart.series[s].name, "middle", kSmallFont);
    }
    const double label_y = bottom + (labels_fit ? 29 : 16);
    c.text(x_group + group_w / 2, label_y, group_lines[g].first, "middle");
    if (!group_lines[g].second.empty()) c.text(x_group + group_w / 2, label_y + 14, group_lines[g].second, "middle");
  }
  c.line(left, y(0), right, y(0), kInk);
  if (chart.reference)
    c.line(left, y(*chart.reference), right, y(*chart.reference), kInk, " class=\"reference\"" + dashed);
  draw_legend(c, bottom + 50);
  return c.finish();
}

std::string stacked_bar_chart(const StackedBarChart& chart) {
  double label_w = 0, max_total = 0;
  for (const auto& b : chart.bars) {
    label_w = std::max(label_w, text_width(b.label, kFont));
    double total = 0;
    for (double v : b.values) total += std::max(v, 0.0);
    max_total = std::max(max_total, total);
  }
  const int width = std::max(chart.width, 240);
  const double left = std::min(label_w + 16, width * 0.4), right = width - 76;
  // The legend's rows are known only once laid out: lay it out on a scratch canvas first.
  Canvas scratch(width, 120, "");
  const double legend_rows = (legend(scratch, left, 0, right + 60, chart.segments).y / 18) + 1;
  const double top = 34 + legend_rows * 18, row = 26;
  const double bottom = top + row * double(std::max<size_t>(chart.bars.size(), 1));
  Canvas c(width, int(bottom + 44), chart.title);
  legend(c, left, 44, right + 60, chart.segments);

  const Ticks t = nice_ticks(0, max_total);
  const Scale x{t.first(), t.last(), left, right};
  for (double v : t.values) {
    c.line(x(v), top - 4, x(v), bottom, kGrid);
    c.text(x(v), bottom + 15, tick_label(t, v), "middle", kFont, " class=\"tick\"");
  }
  c.text((left + right) / 2, bottom + 34, chart.x_label, "middle");

  for (size_t b = 0; b < chart.bars.size(); ++b) {
    const auto& bar = chart.bars[b];
    const double y = top + row * double(b), h = row - 8, yc = y + h / 2 + 4;
    c.text(left - 8, yc, bar.label, "end");
    double total = 0;
    for (double v : bar.values) total += std::max(v, 0.0);
    double at = 0;
    for (size_t s = 0; s < bar.values.size() && s < chart.segments.size(); ++s) {
      const double v = bar.values[s];
      if (!(v > 0)) continue;
      const double x0 = x(at), w = x(at + v) - x0;
      const std::string& name = chart.segments[s];
      c.rect(x0, y, w, h, palette(s), "segment",
             fmt::format("{}, {}: {} {} ({})", bar.label, name, format_sig(v), chart.unit, format_percent(v / total)));
      // The category's name inside its segment when it fits, so print in grey still says which is which.
      if (text_width(name, kSmallFont) + 6 <= w)
        c.text(x0 + w / 2, yc - 1, name, "middle", kSmallFont, fmt::format(" fill=\"{}\"", text_on(palette(s))));
      at += v;
    }
    c.text(x(at) + 6, yc, format_sig(total) + " " + chart.unit, "start", kFont, " class=\"total\"");
  }
  c.line(left, top - 4, left, bottom, kInk);
  return c.finish();
}

std::string point_chart(const PointChart& chart) {
  Canvas c(chart.width, chart.height, chart.title);
  double lo = 0, hi = 0;
  size_t missing = 0;
  std::string missing_list;
  for (size_t i = 0; i < chart.points.size(); ++i) {
    const auto& v = chart.points[i].value;
    if (v) {
      lo = std::min(lo, *v), hi = std::max(hi, *v);
    } else if (++missing <= 4) {
      missing_list += fmt::format("{}#{} {}", missing > 1 ? ", " : "", i, shorten(chart.points[i].label, 32));
    }
  }
  const Ticks ty = nice_ticks(lo, hi * 1.12);  // room for the captions above the highest points
  const double left = 64, right = c.width() - 16, top = 40, bottom = c.height() - (missing ? 72 : 54);
  const Scale y{ty.first(), ty.last(), bottom, top};
  value_axis_y(c, ty, y, left, right, chart.y_label);

  const double n = double(std::max<size_t>(chart.points.size(), 1));
  const Scale x{-0.5, n - 0.5, left, right};
  const Ticks tx = nice_ticks(0, std::max(n - 1, 1.0), std::min(10, int(n)));
  for (double v : tx.values)
    if (v <= n - 1 && v == std::floor(v))  // indices are whole: a 2.5 step keeps 0, 5, 10
      c.text(x(v), bottom + 15, fmt::format("{}", int64_t(v)), "middle", kFont, " class=\"tick\"");
  c.text((left + right) / 2, bottom + 32, chart.x_label, "middle");
  c.line(left, bottom, right, bottom, kInk);

  // A thin line joins neighbours that both have a value: a missing point breaks it.
  for (size_t i = 1; i < chart.points.size(); ++i) {
    const auto &a = chart.points[i - 1].value, &b = chart.points[i].value;
    if (a && b) c.line(x(double(i - 1)), y(*a), x(double(i)), y(*b), "#9bb", " stroke-width=\"1\"");
  }
  size_t captions = 0;
  for (size_t i = 0; i < chart.points.size(); ++i) {
    const auto& p = chart.points[i];
    if (!p.value) continue;
    const double px = x(double(i)), py = y(*p.value);
    const std::string tooltip = fmt::format("#{} {}: {}{}{}", i, p.label, format_sig(*p.value), chart.value_suffix,
                                            p.marked ? " (" + chart.marked_name + ")" : "");
    if (p.marked) {
      c.raw(
          fmt::format("<path class=\"point marked\" d=\"M{0} {1} l6 6 l-6 6 l-6 -6 z\" fill=\"{2}\" stroke=\"#000\">"
                      "<title>{3}</title></path>\n",
                      num(px), num(py - 6), palette(5), escape(tooltip)));
      // Captions for the first few only: more would overlap, and the table lists them all.
      if (++captions <= 6) c.text(px, py - 10, shorten(p.label, 28), "middle", kSmallFont, kHalo);
    } else {
      c.raw(
          fmt::format("<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>\n",
                      num(px), num(py), palette(0), escape(tooltip)));
    }
  }
  // The legend: shapes, not only colours.
  const double ly = c.height() - (missing ? 30 : 12);
  c.raw(fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"/>\n", num(left + 4), num(ly - 4), palette(0)));
  c.text(left + 12, ly, "tensor");
  if (!chart.marked_name.empty()) {
    c.raw(fmt::format("<path d=\"M{} {} l6 6 l-6 6 l-6 -6 z\" fill=\"{}\" stroke=\"#000\"/>\n", num(left + 84),
                      num(ly - 10), palette(5)));
    c.text(left + 94, ly, chart.marked_name);
  }
  if (missing)
    c.text(
        left, c.height() - 10,
        fmt::format("{} not drawn ({}): {}{}", missing, chart.missing_reason, missing_list, missing > 4 ? ", …" : ""),
        "start", kFont, fmt::format(" class=\"missing\" fill=\"{}\"", kMuted));
  return c.finish();
}

}  // namespace octet::explain::svg
