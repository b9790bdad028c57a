#include "apps/serve/image_input.h"

#include <fmt/format.h>

#include "apps/cli/model_inputs.h"
#include "io/datasets/dataset.h"
#include "io/datasets/image_convert.h"
#include "io/datasets/image_decode.h"
#include "apps/serve/request_error.h"
#include "apps/serve/stb_codecs.h"

namespace octet::serve {
namespace {

std::vector<uint8_t> convert_channels(const std::vector<uint8_t>& chw, int c, int h, int w, int channels) {
  if (c == channels) return chw;
  std::vector<uint8_t> out(size_t(channels) * size_t(h) * size_t(w));
  data::detail::convert_image(chw.data(), c, h, w, out.data(), channels, h, w);
  return out;
}

std::vector<uint8_t> resize(const std::vector<uint8_t>& chw, int c, int h, int w, int height, int width) {
  if (h == height && w == width) return chw;
  const size_t plane = size_t(h) * size_t(w), out_plane = size_t(height) * size_t(width);
  std::vector<uint8_t> out(size_t(c) * out_plane);
  for (int k = 0; k < c; ++k)
    if (!resize_plane(chw.data() + size_t(k) * plane, w, h, out.data() + size_t(k) * out_plane, width, height))
      throw RequestError(400, fmt::format("could not resize the {}x{} image to {}x{}", w, h, width, height));
  return out;
}

std::string in_mib(int64_t bytes) { return fmt::format("{:.0f} MiB", double(bytes) / (1 << 20)); }

}  // namespace

int64_t decode_memory_bytes(const data::ImageHeader& header) {
  return data::decode_peak_bytes(header) + int64_t{header.width} * header.height * 3 * 2;
}

std::vector<uint8_t> fit_pixels(const std::vector<uint8_t>& chw, int c, int h, int w, int channels, int height,
                                int width) {
  // Fewer channels first and more channels last: the resize then works on as few planes as it can.
  if (channels <= c) return resize(convert_channels(chw, c, h, w, channels), channels, h, w, height, width);
  return convert_channels(resize(chw, c, h, w, height, width), c, height, width, channels);
}

PreparedImage prepare_image(std::string_view bytes, const TensorSpec& input, const ModelCard& card,
                            const UploadLimits& limits) {
  if (bytes.empty())
    throw RequestError(400, "the upload is empty: send an image as the multipart field 'image' or as the request body");
  if (bytes.size() > limits.max_bytes)
    throw RequestError(413, fmt::format("the upload is {} bytes; this server takes images of at most {} bytes "
                                        "(--max-upload-bytes)",
                                        bytes.size(), limits.max_bytes));
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  MemoryBudget::Lease lease;
  if (limits.memory) {
    // Reserved from the header before anything is decoded. No header, or one over the pixel
    // limit, and decode_image refuses the bytes without allocating for them.
    const std::optional<data::ImageHeader> h = data::read_image_header(b, bytes.size());
    if (h && int64_t{h->width} * h->height <= limits.max_pixels) {
      const int64_t need = decode_memory_bytes(*h);
      if (uint64_t(need) > limits.memory->capacity())
        throw RequestError(413, fmt::format("decoding this {}x{} image takes up to {}, more than this server's "
                                            "--memory-budget of {}; downscale it first",
                                            h->width, h->height, in_mib(need), in_mib(int64_t(limits.memory->capacity()))));
      std::optional<MemoryBudget::Lease> l = limits.memory->reserve(size_t(need), limits.memory_wait);
      if (!l)
        throw RequestError(503, fmt::format("other uploads hold this server's memory for decoding (--memory-budget "
                                            "{}; this image needs up to {}); try again shortly",
                                            in_mib(int64_t(limits.memory->capacity())), in_mib(need)));
      lease = std::move(*l);
    }
  }
  data::DecodedImage im;
  try {
    im = data::decode_image(b, bytes.size(), "upload", limits.max_pixels);
  } catch (const data::ImageDecodeError& e) {
    using Kind = data::ImageDecodeError::Kind;
    switch (e.kind) {
      case Kind::not_an_image:
        throw RequestError(415, std::string(e.what()) + "; send a PNG, JPEG, BMP, GIF, PGM/PPM, TGA or PSD image");
      case Kind::too_many_pixels:
        throw RequestError(413, std::string(e.what()) + " (this server's --max-pixels)");
      case Kind::over_declared:
        throw RequestError(413, e.what());
      case Kind::damaged:
        throw RequestError(400, e.what());
    }
    throw RequestError(400, e.what());
  }
  const int channels = int(input.dims.at(1)), height = int(input.dims.at(2)), width = int(input.dims.at(3));
  data::Dataset d;
  d.channels = channels;
  d.height = height;
  d.width = width;
  d.pixels = fit_pixels(im.chw, im.channels, im.height, im.width, channels, height, width);
  im.chw = {};
  lease = {};  // what is left is the model's input
  d.labels = {-1};
  PreparedImage p;
  p.input = cli::make_inputs(d, card, input);
  p.channels = im.channels;
  p.height = im.height;
  p.width = im.width;
  p.resized = im.height != height || im.width != width;
  return p;
}

}  // namespace octet::serve
