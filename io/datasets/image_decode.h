// Decoding one image's bytes (PNG, JPEG, BMP, GIF, PGM/PPM, ... whatever stb_image reads) to
// planar CHW, shared by the image folder reader and `octet serve`'s uploads. Inputs that make
// Debian 12's stb_image write out of bounds, allocate without limit or decode for seconds are
// refused before stb sees them (each found by tests/fuzz/fuzz_images or a hostile trial of
// `octet serve`).
//
// Memory: every format stb reads allocates its pixels from the size its header declares, which
// the caller bounds (max_pixels), except a PNG, whose zlib stream stb inflates into a buffer it
// doubles for as long as the stream goes on: a 2 MB file declaring 28x28 pixels inflated to
// 2 GiB. So a PNG's stream is first inflated here in small pieces, and refused as soon as it
// yields more than its declared rows can hold. (JPEG, GIF's LZW, the RLE of TGA and PSD, BMP,
// PNM, PIC and HDR decode into a buffer sized from the header and stop at its end.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace octet::data {

struct DecodedImage {
  int channels = 0, height = 0, width = 0;  // 1 or 3 channels: gray (+ alpha) -> 1, RGB (+ alpha) -> 3
  std::vector<uint8_t> chw;                 // planar, alpha dropped
};

// 2^25 pixels (33.6 megapixels): what the dataset readers decode at most.
constexpr int64_t kMaxDecodedPixels = int64_t{1} << 25;

struct ImageDecodeError : std::runtime_error {
  enum class Kind {
    not_an_image,     // no format stb_image knows starts these bytes
    too_many_pixels,  // the header announces more than max_pixels
    damaged,          // a known format, but truncated, corrupt or refused as hostile
    over_declared,    // compressed pixel data that inflates past the size the header declares
  };
  ImageDecodeError(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  Kind kind;
};

// Throws ImageDecodeError, its message starting with "NAME: ".
DecodedImage decode_image(const uint8_t* bytes, size_t size, const std::string& name,
                          int64_t max_pixels = kMaxDecodedPixels);

// What an image's header declares, as stb_image reads it; nullopt when no format it knows
// starts the bytes or the header is damaged (decode_image then refuses them).
struct ImageHeader {
  int width = 0, height = 0;
  int channels = 0;           // in the file (a palette counts as its entries' channels)
  int bytes_per_channel = 1;  // 2 for 16-bit PNG / PSD / PNM, 4 for HDR (float)
};
std::optional<ImageHeader> read_image_header(const uint8_t* bytes, size_t size);

// An upper bound of what decode_image holds at once for an image with this header: stb's
// working buffers (a PNG's inflated rows, its pixels with an added alpha, a 16 -> 8-bit copy;
// a GIF's 9 bytes a pixel; an HDR's floats) and the planar copy it returns.
int64_t decode_peak_bytes(const ImageHeader& h);

}  // namespace octet::data
