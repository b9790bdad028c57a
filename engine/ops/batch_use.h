#pragma once
// The usual ways an op treats the images of a batch (OpImpl::batch_use), for the op files.
// By induction over the plan, every activation a step reads carries the images on axis 0 (the
// Session asks only when every earlier step kept them there), so an op only has to say where
// its outputs' images come from; constants carry no images.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine/op_registry.h"

namespace octet::ops {

inline bool is_activation(const OpContext& c, size_t i) {
  return c.has(i) && (i >= c.in_const.size() || c.in_const[i] == nullptr);
}

inline BatchUse keeps_images_apart_if(bool apart) {
  return apart ? BatchUse::keeps_images_apart : BatchUse::mixes_images;
}

// A rank-0 activation: no images of its own, so (every step before keeping the images apart)
// a scale or zero point computed from a range of the whole batch (DynamicQuantizeLinear's).
inline bool is_batch_scalar(const OpContext& c, size_t i) { return is_activation(c, i) && c.info(i).dims.empty(); }

// `use` of a step that also reads batch scalars (`scalars`) or writes a range over the batch.
inline BatchUse with_batch_range(BatchUse use, bool scalars_or_range) {
  return use == BatchUse::keeps_images_apart && scalars_or_range ? BatchUse::apart_but_batch_range : use;
}

inline BatchUse mixes_images(const OpContext&, const std::vector<TensorInfo>&) { return BatchUse::mixes_images; }

// Element-wise with numpy broadcasting (a unary op is the one-input case). An activation of a
// lower rank than the output would be broadcast with its images along another axis; a constant
// aligned with the output's axis 0 must have extent 1 there (one row per image would tie the
// result to the image's place in the batch, and fail at another batch).
inline BatchUse broadcast_per_image(const OpContext& c, const std::vector<TensorInfo>& out) {
  if (out.empty() || out[0].dims.empty()) return BatchUse::mixes_images;
  const size_t rank = out[0].dims.size();
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (!c.has(i)) continue;
    const ir::Dims& d = c.info(i).dims;
    if (is_activation(c, i) ? d.size() != rank : d.size() == rank && d[0] != 1) return BatchUse::mixes_images;
  }
  return BatchUse::keeps_images_apart;
}

// Input `images` holds the images (a feature map, rows) and every other input is a constant
// (weights, quantization parameters): convs, pools, lookups. A run-time parameter (a scale from
// a DynamicQuantizeLinear) may come from the whole batch.
inline BatchUse per_image_with_constants(const OpContext& c, size_t images = 0) {
  bool scalars = false;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (i == images || !is_activation(c, i)) continue;
    if (!is_batch_scalar(c, i)) return BatchUse::mixes_images;
    scalars = true;
  }
  return with_batch_range(keeps_images_apart_if(is_activation(c, images)), scalars);
}

// (Batched) matrix product of inputs a and b, every other input a constant. A's rows are the
// images at rank 2 and its batch axis above; B's axis 0 is summed over at rank 2, so an
// activation B needs rank 3 or more. An activation must have the output's rank (a lower one
// is broadcast with its images on another axis); a constant of the output's rank, 3 or more,
// is broadcast along axis 0 only with extent 1.
inline BatchUse matmul_per_image(const OpContext& c, const std::vector<TensorInfo>& out, size_t a, size_t b) {
  if (out.empty()) return BatchUse::mixes_images;
  const size_t rank = out[0].dims.size();
  bool scalars = false;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (!c.has(i)) continue;
    const ir::Dims& d = c.info(i).dims;
    if (i != a && i != b) {
      if (is_batch_scalar(c, i)) scalars = true;
      else if (is_activation(c, i)) return BatchUse::mixes_images;
    } else if (is_activation(c, i)) {
      if (d.size() != rank || d.size() < (i == a ? 2u : 3u)) return BatchUse::mixes_images;
    } else if (d.size() == rank && rank >= 3 && d[0] != 1) {
      return BatchUse::mixes_images;
    }
  }
  return with_batch_range(BatchUse::keeps_images_apart, scalars);
}

// Gemm-like: one output row per row of A (untransposed), B a constant. The bias C may be an
// activation with one row per image; a constant C has one row for all.
inline BatchUse gemm_per_image(const OpContext& c, size_t a, size_t cc, bool trans_a) {
  if (trans_a || !is_activation(c, a)) return BatchUse::mixes_images;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (i == a || !c.has(i)) continue;
    const ir::Dims& d = c.info(i).dims;
    if (i == cc && d.size() == 2 && (is_activation(c, i) || d[0] == 1)) continue;
    if (i == cc && d.size() < 2 && !is_activation(c, i)) continue;
    if (is_activation(c, i) || i == cc) return BatchUse::mixes_images;
  }
  return BatchUse::keeps_images_apart;
}

// Concat along `axis` (normalised): apart when not along the images and every piece is an
// activation (a constant piece has one extent on axis 0, tied to the planned batch).
inline BatchUse concat_per_image(const OpContext& c, const std::vector<size_t>& pieces, int64_t axis) {
  if (axis == 0) return BatchUse::mixes_images;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const bool piece = std::find(pieces.begin(), pieces.end(), i) != pieces.end();
    if (c.has(i) && is_activation(c, i) != piece) return BatchUse::mixes_images;
  }
  return BatchUse::keeps_images_apart;
}

}  // namespace octet::ops
