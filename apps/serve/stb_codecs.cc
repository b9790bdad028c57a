#include "apps/serve/stb_codecs.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#define STB_IMAGE_RESIZE_STATIC
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb/stb_image_resize.h>

namespace octet::serve {

std::string encode_png(const uint8_t* pixels, int width, int height, int components) {
  std::string out;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
  };
  if (!stbi_write_png_to_func(append, &out, width, height, components, pixels, width * components)) return {};
  return out;
}

bool resize_plane(const uint8_t* src, int width, int height, uint8_t* dst, int dst_width, int dst_height) {
  return stbir_resize_uint8(src, width, height, 0, dst, dst_width, dst_height, 0, 1) != 0;
}

}  // namespace octet::serve
