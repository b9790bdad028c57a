#include "tests/explain/page_checks.h"

#include <regex>

namespace octet::explain::testing {

size_t count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

const std::vector<std::string>& section_ids() {
  static const std::vector<std::string> ids{"verdict", "speed", "time", "accuracy", "recommendations", "machine"};
  return ids;
}

std::vector<size_t> section_positions(std::string_view page) {
  std::vector<size_t> at;
  for (const auto& id : section_ids()) at.push_back(page.find("<section id=\"" + id + "\""));
  return at;
}

std::vector<SvgSize> svg_sizes(std::string_view page) {
  static const std::regex width(R"re(\swidth="([0-9.]+)")re"), height(R"re(\sheight="([0-9.]+)")re");
  std::vector<SvgSize> sizes;
  for (size_t at = page.find("<svg"); at != std::string_view::npos; at = page.find("<svg", at + 4)) {
    const std::string tag(page.substr(at, page.find('>', at) - at));
    SvgSize s;
    std::smatch m;
    if (std::regex_search(tag, m, width)) s.width = std::stod(m[1]);
    if (std::regex_search(tag, m, height)) s.height = std::stod(m[1]);
    sizes.push_back(s);
  }
  return sizes;
}

std::string without_svg_namespace(std::string page) {
  const std::string allowed = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (size_t at; (at = page.find(allowed)) != std::string::npos;) page.erase(at, allowed.size());
  return page;
}

}  // namespace octet::explain::testing
