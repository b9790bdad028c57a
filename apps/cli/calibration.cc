#include "apps/cli/calibration.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>

#include "apps/cli/commands.h"
#include "apps/cli/model_inputs.h"
#include "apps/cli/progress.h"

namespace octet::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void add_calibration_options(CLI::App* cmd, CalibrationArgs& a) {
  cmd->add_option("--calib", a.spec,
                  "Calibration images, a dataset spec like --data (default: the model card's dataset, training "
                  "split, e.g. fashion-mnist:train; npy:FILE takes float32 [N,C,H,W] model inputs as they are)");
  auto* count = cmd->add_option("--calib-count", a.count, "Calibrate on the first N images (default 1000)")
                    ->check(non_negative());
  cmd->add_option("--per-class", a.per_class, "Calibrate on the first K images of each class instead")
      ->check(positive())
      ->excludes(count);
  cmd->add_option("--method", a.method, "Range method: minmax, percentile, entropy or mse (default minmax)");
  cmd->add_option("--percentile", a.percentile, "Percentile kept by --method percentile (default 99.999)");
  cmd->add_flag("--per-tensor", a.per_tensor, "One weight scale per tensor instead of per output channel");
  cmd->add_option("--act", a.act, "Activation type: uint8 (default) or int8");
  cmd->add_option("--keep-float", a.keep_float, "Op types left in float, comma-separated (e.g. Sigmoid,Mul)");
  cmd->add_option("--mode", a.mode,
                  "static (default): calibrated activation scales, a QDQ model; dynamic: no calibration, each "
                  "Conv / MatMul / Gemm input quantized per call by DynamicQuantizeLinear (ConvInteger / "
                  "MatMulInteger, as onnxruntime's quantize_dynamic writes it)");
  cmd->add_flag("--per-channel", a.per_channel,
                "--mode dynamic: one weight scale per output channel (default: per tensor, like quantize_dynamic)");
  cmd->add_flag("--allow-test-calibration", a.allow_test,
                "Allow calibrating on a test split (the accuracy measured on it is then optimistic)");
}

QuantizeSettings parse_settings(const CalibrationArgs& a) {
  QuantizeSettings s;
  s.calibration.method = calib::parse_method(a.method);
  if (!(a.percentile > 50 && a.percentile <= 100))
    throw ir::Error(fmt::format("--percentile must be in (50, 100], got {}", a.percentile));
  s.calibration.observer.percentile = a.percentile;
  s.quantize.per_channel = !a.per_tensor;
  const std::string act = lower(a.act);
  if (act == "uint8" || act == "u8") s.quantize.activations = calib::QType::u8;
  else if (act == "int8" || act == "s8") s.quantize.activations = calib::QType::s8;
  else throw ir::Error("--act must be uint8 or int8, got '" + a.act + "'");
  for (const auto& op : split_list(a.keep_float)) s.quantize.keep_float.insert(op);
  const std::string mode = lower(a.mode);
  if (mode != "static" && mode != "dynamic") throw ir::Error("--mode must be static or dynamic, got '" + a.mode + "'");
  s.dynamic = mode == "dynamic";
  if (a.per_channel && !s.dynamic)
    throw ir::Error("--per-channel is for --mode dynamic (static quantization is per channel unless --per-tensor)");
  if (s.dynamic && a.per_tensor)
    throw ir::Error("--per-tensor is for --mode static (dynamic quantization is per tensor unless --per-channel)");
  if (s.dynamic && s.quantize.activations != calib::QType::u8)
    throw ir::Error("--act int8 is for --mode static: DynamicQuantizeLinear writes uint8 activations");
  s.dynamic_options.per_channel = a.per_channel;
  s.dynamic_options.keep_float = s.quantize.keep_float;
  return s;
}

bool names_test_split(const std::string& spec, std::string* why) {
  auto say = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return true;
  };
  if (spec.starts_with("fashion-mnist")) {
    const std::string rest = spec.substr(13);
    if (rest.empty() || rest[0] == '@') return say("'" + spec + "' is Fashion-MNIST's test split (the default split)");
    if (rest.starts_with(":test")) return say("'" + spec + "' is Fashion-MNIST's test split");
    return false;
  }
  const size_t colon = spec.find(':');
  const std::string arg = colon == std::string::npos ? spec : spec.substr(colon + 1);
  for (const std::string& file : split_list(arg)) {
    fs::path p(file);
    std::string name = p.filename().string();
    if (name.empty()) name = p.parent_path().filename().string();  // a folder given as DIR/
    const std::string l = lower(name);
    if (l.find("test") != std::string::npos || l.find("t10k") != std::string::npos)
      return say("'" + file + "' looks like a test split (its name contains '" +
                 std::string(l.find("test") != std::string::npos ? "test" : "t10k") + "')");
  }
  return false;
}

std::string calibration_spec(const CalibrationArgs& a, const std::optional<ModelCard>& card,
                             const std::string& model_path) {
  std::string spec = a.spec;
  if (spec.empty()) {
    const std::string card_data = card ? card->data : "";
    if (card_data.empty())
      throw ir::Error(model_path + " has no model card naming its dataset: give --calib SPEC with training images "
                                   "(e.g. fashion-mnist:train, cifar10:data_batch_1.bin, images:DIR, or npy:calib.npy with "
                                   "float32 [N,C,H,W] model inputs)");
    if (!card_data.starts_with("fashion-mnist"))
      throw ir::Error("the model card's dataset '" + card_data + "' has no known training split: give --calib SPEC "
                      "with training images (e.g. cifar10:data_batch_1.bin, images:DIR)");
    const size_t at = card_data.find('@');
    spec = "fashion-mnist:train" + (at == std::string::npos ? std::string() : card_data.substr(at));
  }
  std::string why;
  if (!a.allow_test && names_test_split(spec, &why))
    throw ir::Error("refusing to calibrate on a test split: " + why +
                    "; calibrating on the images the model is evaluated on makes INT8 accuracy look better than it "
                    "is. Give training images with --calib (e.g. fashion-mnist:train), or --allow-test-calibration");
  return spec;
}

QuantizeResult quantize_for_cli(const ir::Graph& fp32, const std::string& model_path, const CalibrationArgs& a) {
  QuantizeResult r;
  r.settings = parse_settings(a);
  if (std::string node; calib::is_quantized(fp32, &node))
    throw ir::Error(model_path + " is already quantized (" + node + "); quantize its FP32 original instead");
  if (r.settings.dynamic) {
    const auto t0 = std::chrono::steady_clock::now();
    r.data = "none (dynamic: ranges computed on every call)";
    r.selection = "none";
    r.graph = calib::quantize_dynamic(calib::prepare_for_quantization(fp32), r.settings.dynamic_options, &r.report);
    r.quantize_seconds = seconds_since(t0);
    return r;
  }
  const std::optional<ModelCard> card = find_model_card(model_path);
  const std::string spec = calibration_spec(a, card, model_path);
  if (a.per_class == 0 && a.count == 0) throw ir::Error("the calibration set is empty: --calib-count is 0");
  const TensorSpec input = image_input(fp32, model_path);

  auto t0 = std::chrono::steady_clock::now();
  data::Dataset d = load_dataset_for(spec, input, a.per_class > 0 ? -1 : a.count, card ? card->classes : std::vector<std::string>{});
  if (d.count() == 0) throw ir::Error("the calibration set is empty: '" + spec + "' has no images");
  std::string shortfall;
  if (a.per_class > 0) {
    d = data::subset(d, data::stratified_indices(d, a.per_class));
    r.selection = fmt::format("{} per class", a.per_class);
  } else {
    r.selection = fmt::format("first {}", d.count());
    if (d.count() < a.count)
      shortfall = fmt::format("--calib-count {} asked for {} images; '{}' has only {}: calibrated on those", a.count,
                              a.count, spec, d.count());
  }
  ir::TensorData all = make_inputs(d, card.value_or(ModelCard{}), input);
  r.images = all.dims[0];
  r.data = d.description;
  const int batch = std::max(1, a.batch);
  const std::vector<ir::TensorData> batches = split_batches(all, batch);
  r.load_seconds = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  ir::Graph prepared = calib::prepare_for_quantization(fp32);
  const bool histograms = calib::make_observer(r.settings.calibration.method, r.settings.calibration.observer)
                              ->needs_histogram();
  // The bar counts images, over both passes when the method builds histograms.
  Progress bar("calibrate", r.images * (histograms ? 2 : 1), a.progress);
  auto progress = [&](int done, int total, const char*) {
    const int64_t per_pass = int64_t(batches.size());
    const int64_t pass = (done - 1) / per_pass, in_pass = (done - 1) % per_pass + 1;
    bar.update(pass * r.images + std::min<int64_t>(r.images, in_pass * batch));
  };
  auto observers = calib::observe_activations(prepared, batches, r.settings.calibration, progress);
  r.calibrate_seconds = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  r.graph = calib::quantize_graph(prepared, observers, r.settings.quantize, &r.report);
  r.quantize_seconds = seconds_since(t0);
  if (!shortfall.empty()) r.report.warnings.push_back(shortfall);
  for (const auto& op : r.settings.quantize.keep_float) {
    const bool present = std::any_of(fp32.nodes.begin(), fp32.nodes.end(), [&](const ir::Node& n) { return n.op == op; });
    if (!present) r.report.warnings.push_back("--keep-float " + op + ": the model has no " + op + " node");
  }
  return r;
}

json quantize_report_json(const QuantizeResult& r) {
  const auto& s = r.settings;
  const bool per_channel = s.dynamic ? s.dynamic_options.per_channel : s.quantize.per_channel;
  json j = {{"mode", s.dynamic ? "dynamic" : "static"},
            {"data", r.data},
            {"selection", r.selection},
            {"images", r.images},
            {"method", s.dynamic ? "dynamic" : calib::method_name(s.calibration.method)},
            {"weights", per_channel ? "int8 symmetric per channel" : "int8 symmetric per tensor"},
            {"activations", s.quantize.activations == calib::QType::u8 ? "uint8" : "int8"},
            {"keep_float", s.quantize.keep_float},
            {"quantized", r.report.quantized},
            {"float_ops", r.report.float_ops},
            {"absorbed", r.report.absorbed},
            {"warnings", r.report.warnings},
            {"seconds", {{"load", r.load_seconds}, {"calibrate", r.calibrate_seconds}, {"quantize", r.quantize_seconds}}}};
  if (!s.dynamic && s.calibration.method == calib::Method::percentile) j["percentile"] = s.calibration.observer.percentile;
  return j;
}

std::string quantize_report_text(const QuantizeResult& r) {
  const auto& s = r.settings;
  std::string t;
  if (s.dynamic) {
    t += fmt::format("mode         dynamic: activations quantized on every call (DynamicQuantizeLinear, uint8); "
                     "weights int8 per {}\n", s.dynamic_options.per_channel ? "channel" : "tensor");
    t += fmt::format("quantized    {} node{} run as ConvInteger / MatMulInteger\n", r.report.quantized.size(),
                     r.report.quantized.size() == 1 ? "" : "s");
    t += fmt::format("kept float   {} node{}\n", r.report.float_ops.size(), r.report.float_ops.size() == 1 ? "" : "s");
    for (const auto& f : r.report.float_ops) t += "               " + f + "\n";
    return t;
  }
  t += fmt::format("calibration  {} images ({}) of {}\n", r.images, r.selection, r.data);
  std::string method = calib::method_name(s.calibration.method);
  if (s.calibration.method == calib::Method::percentile) method += fmt::format(" {}", s.calibration.observer.percentile);
  t += fmt::format("method       {}; weights int8 per {}; activations {}\n", method,
                   s.quantize.per_channel ? "channel" : "tensor",
                   s.quantize.activations == calib::QType::u8 ? "uint8" : "int8");
  t += fmt::format("quantized    {} node{} run in INT8\n", r.report.quantized.size(),
                   r.report.quantized.size() == 1 ? "" : "s");
  t += fmt::format("kept float   {} node{}\n", r.report.float_ops.size(), r.report.float_ops.size() == 1 ? "" : "s");
  for (const auto& f : r.report.float_ops) t += "               " + f + "\n";
  t += fmt::format("absorbed     {} activation{} (folded into the output clamp)\n", r.report.absorbed.size(),
                   r.report.absorbed.size() == 1 ? "" : "s");
  t += fmt::format("warnings     {}\n", r.report.warnings.empty() ? "none" : std::to_string(r.report.warnings.size()));
  for (const auto& w : r.report.warnings) t += "               " + w + "\n";
  return t;
}

}  // namespace octet::cli
