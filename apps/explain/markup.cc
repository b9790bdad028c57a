#include "apps/explain/markup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace octet::explain {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_sig(double value, int digits) {
  if (value == 0.0 || !std::isfinite(value)) return value == 0.0 ? "0" : "not measured";
  const int magnitude = int(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(digits - 1 - magnitude, 0, 12);
  std::string s = fmt::format("{:.{}f}", value, decimals);
  // A value that rounds to zero at this precision must not print as "-0" or "-0.00".
  if (s.front() == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string format_short(double value, int digits) {
  std::string s = format_sig(value, digits);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string format_count(int64_t value) {
  const std::string digits = std::to_string(value);
  const size_t first = digits.front() == '-' ? 1 : 0;
  std::string out = digits.substr(0, first);
  for (size_t i = first; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_percent(double share) { return format_short(100.0 * share) + "%"; }

}  // namespace octet::explain
