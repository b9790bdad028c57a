#pragma once
// Text for the explain page, HTML and SVG alike: escaping and the number formats it shows.
#include <cstdint>
#include <string>
#include <string_view>

namespace octet::explain {

// & < > " ' as entities: the result is safe as element text and inside a quoted attribute.
std::string escape(std::string_view text);

// `digits` significant digits without an exponent (0.178, 1.13, 118, 12400, 0.000123): times and
// ratios span five decades in one report, and a fixed number of decimals would print 0.00 for one
// end or 12400.000 for the other. -0 prints as 0; a non-finite value (never in a
// valid report) as "not measured", so no page ever shows nan or inf.
std::string format_sig(double value, int digits = 3);

// format_sig without trailing zeros (2 not 2.00, 0.071 not 0.0710), where the value stands
// alone rather than in a column of its kind: ranges, percentages, effects.
std::string format_short(double value, int digits = 3);

// A count with thousands separators: 4500000 -> "4,500,000".
std::string format_count(int64_t value);

// A share (0..1) as a percentage with 3 significant digits: 0.994 -> "99.4%", 1e-4 -> "0.01%".
std::string format_percent(double share);

}  // namespace octet::explain
