#pragma once
// The paradox atlas (`octet atlas`, docs/atlas.md): every model of a zoo explained on this
// machine, summed up as one JSON ("schema": "octet-atlas/1") and one self-contained page whose
// heat map shows INT8 ÷ FP32 per model, ISA level, batch and thread count, each cell linking to
// the model's reason. Everything here is JSON in, JSON or HTML out: the measuring is explain's
// (apps/explain/explain.h), so a saved atlas re-renders and two machines' atlases compare.
#include <nlohmann/json.hpp>
#include <string>

namespace octet::explain {

// One model's entry of the atlas from its explain report: the cells (speed-ups, times, octet ÷
// ORT), the dominant reason per INT8 precision and level with the top rows it rests on, and the
// time per category. `name` names the model in the atlas.
nlohmann::json atlas_model(const std::string& name, const nlohmann::json& report);

// The kind of a "Where INT8 loses time" reason, a short label for a heat-map cell: "scalar
// fallback", "runs in float", "quantize overhead", "dynamic-quantize cost", "no dot product",
// "depthwise, no dot product", "memory-bound", "slower kernel", "INT8-only steps".
std::string reason_kind(const std::string& reason, const std::string& precision, bool depthwise);

// Throws std::runtime_error naming the first thing that makes `atlas` not an octet-atlas/1
// document the renderer can show (`what` prefixes the message, e.g. the file name).
void check_atlas(const nlohmann::json& atlas, const std::string& what);

// The page: machine, heat maps (static and dynamic INT8 ÷ FP32, octet ÷ ORT), one reason
// section per model. No script, no external URL.
std::string render_atlas_html(const nlohmann::json& atlas);

// Two machines' atlases: their facts and heat maps side by side, and the ratio of their
// speed-ups (B ÷ A) for the models and columns both measured.
std::string render_atlas_comparison_html(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace octet::explain
