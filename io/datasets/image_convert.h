// Converting one planar CHW uint8 image to another channel count and size.
#pragma once

#include <cstdint>

namespace octet::data::detail {

// Channels 1 and 3 only: 3 -> 1 by ITU-R BT.601 luma (0.299 R + 0.587 G + 0.114 B, rounded),
// 1 -> 3 by replication. The size changes by bilinear interpolation with half-pixel centres
// and no antialiasing (OpenCV INTER_LINEAR, ONNX Resize linear/half_pixel), so a constant
// image stays constant. src and dst must not overlap.
void convert_image(const uint8_t* src, int c, int h, int w, uint8_t* dst, int dst_c, int dst_h, int dst_w);

}  // namespace octet::data::detail
