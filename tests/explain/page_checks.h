#pragma once
// Structure checks on a rendered explain page, shared by the renderer's tests and the browser
// test (which runs them on the DOM Chromium dumps): counts and positions, not golden strings.
#include <string>
#include <string_view>
#include <vector>

namespace octet::explain::testing {

size_t count(std::string_view text, std::string_view what);

// The six section ids of the page, in the order the page must show them.
const std::vector<std::string>& section_ids();

// Where each `<section id="ID"` starts (npos when absent), in section_ids() order.
std::vector<size_t> section_positions(std::string_view page);

// The width and height attributes of every <svg ...> opening tag (-1 where one is missing).
struct SvgSize {
  double width = -1, height = -1;
};
std::vector<SvgSize> svg_sizes(std::string_view page);

// The page with its allowed URL (the SVG namespace in xmlns attributes) removed, so that any
// "http" left is a link to the outside.
std::string without_svg_namespace(std::string page);

}  // namespace octet::explain::testing
