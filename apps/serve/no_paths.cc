#include "apps/serve/no_paths.h"

namespace octet::serve {

std::string without_paths(std::string_view text) {
  constexpr std::string_view kEnds = " \t\r\n,;()[]\"'";
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (kEnds.find(text[i]) != std::string_view::npos) {
      out += text[i++];
      continue;
    }
    size_t end = text.find_first_of(kEnds, i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    if (word.find('/') != std::string_view::npos) {
      while (word.size() > 1 && word.back() == '/') word.remove_suffix(1);
      word = word.substr(word.find_last_of('/') + 1);
    }
    out += word;
    i = end;
  }
  return out;
}

}  // namespace octet::serve
