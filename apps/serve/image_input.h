#pragma once
// An uploaded image as the model's input: decoded (io/datasets/image_decode.h), converted to
// the input's channel count, resized to its height x width and normalized by the model card
// exactly as `octet eval` normalizes a dataset (cli::make_inputs).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/session.h"
#include "io/datasets/image_decode.h"
#include "io/model_card.h"
#include "apps/serve/memory_budget.h"

namespace octet::serve {

struct UploadLimits {
  size_t max_bytes = size_t{4} << 20;      // --max-upload-bytes
  int64_t max_pixels = int64_t{4096} * 4096;  // width x height as the image's header says
  // --memory-budget: a decode first reserves here the most it can take (decode_memory_bytes),
  // waiting up to memory_wait for other requests to free it. Null: no budget.
  MemoryBudget* memory = nullptr;
  std::chrono::milliseconds memory_wait{2000};
};

struct PreparedImage {
  ir::TensorData input;  // [1, C, H, W] float32, ready for Session::run
  int channels = 0, height = 0, width = 0;  // the upload as decoded (alpha dropped)
  bool resized = false;
};

// `input` is the model's image input ([N, C, H, W] float32 with C, H, W fixed). Throws
// RequestError: 400 for no bytes or a damaged image, 413 for more bytes or pixels than the
// limits allow, for a PNG whose pixel data inflates past its declared size (a decompression
// bomb) or an image whose decoding needs more than the whole memory budget, 415 for bytes that
// are no image format stb_image reads, 503 when other decodes hold the budget for too long.
PreparedImage prepare_image(std::string_view bytes, const TensorSpec& input, const ModelCard& card,
                            const UploadLimits& limits);

// The most that decoding and fitting an image of this header to the model's input can hold at
// once: the decoder's buffers (data::decode_peak_bytes) and fit_pixels' copies.
int64_t decode_memory_bytes(const data::ImageHeader& header);

// Planar CHW pixels converted to `channels` (gray <-> RGB by ITU-R 601 luma / replication) and
// resized to height x width with stb_image_resize: an upload is usually far larger than a small
// model's input, and a bilinear resize without a filter would sample a few of its pixels only.
std::vector<uint8_t> fit_pixels(const std::vector<uint8_t>& chw, int c, int h, int w, int channels, int height,
                                int width);

}  // namespace octet::serve
