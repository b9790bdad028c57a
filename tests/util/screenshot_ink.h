#pragma once
// What a browser screenshot shows, to tell a painted page from a blank or an error page: its size,
// how many distinct colours it has (5 bits a channel) and the share of pixels that are not
// near-white. Reads the PNG with stb_image, which the test links through octet_datasets.
#include <stb/stb_image.h>

#include <optional>
#include <set>
#include <string>

namespace octet::testing {

struct ScreenshotInk {
  int width = 0, height = 0;
  size_t colours = 0;
  double inked = 0;  // fraction of pixels with any channel below 200
};

inline std::optional<ScreenshotInk> screenshot_ink(const std::string& png) {
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(png.c_str(), &w, &h, &channels, 3);
  if (!pixels) return std::nullopt;
  std::set<int> colours;
  size_t inked = 0;
  for (size_t i = 0; i < size_t(w) * size_t(h); ++i) {
    const unsigned char* p = pixels + 3 * i;
    colours.insert((p[0] >> 3) << 10 | (p[1] >> 3) << 5 | (p[2] >> 3));
    inked += p[0] < 200 || p[1] < 200 || p[2] < 200;
  }
  stbi_image_free(pixels);
  return ScreenshotInk{w, h, colours.size(), double(inked) / (double(w) * h)};
}

}  // namespace octet::testing
