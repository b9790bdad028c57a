// The second hostile trial (issue 32) through the CLI: writers that must not replace device
// nodes, results lost to a full standard output, eval on a model that is not a classifier, and
// answers that used to be silently wrong (Clip with min > max, Slice with a step of INT64_MIN,
// NaN in diff, a model card that does not fit) or unclear errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "tests/util/cli_runner.h"
#include "tests/util/onnx_builder.h"
#include "io/npy.h"

namespace hostile_trial {

namespace fs = std::filesystem;
using octet::testing::ElemType;
using octet::testing::OnnxBuilder;
using octet::testing::run_cli;
using octet::testing::run_shell;
using octet::testing::ScratchDir;
using octet::testing::TensorValue;

const fs::path kSource = OCTET_SOURCE_DIR;
const std::string kTinyNet = (kSource / "models" / "tinynet.onnx").string();

// Exit status `status`, and every piece of `says` in what it printed.
void expect_refusal(const std::string& args, int status, const std::vector<std::string>& says) {
  const auto r = run_cli(args, true);
  EXPECT_EQ(r.status, status) << args << "\n" << r.output;
  for (const auto& s : says) EXPECT_NE(r.output.find(s), std::string::npos) << args << "\n" << r.output << "\nwants: " << s;
}

std::string save(const OnnxBuilder& b, const ScratchDir& dir, const std::string& name) {
  const std::string path = (dir.path / name).string();
  b.save(path);
  return path;
}

std::string relu_model(const ScratchDir& dir, const std::vector<int64_t>& dims, const std::string& name = "relu.onnx") {
  OnnxBuilder b(13);
  b.output(b.node("Relu", {b.input("x", dims)}));
  return save(b, dir, name);
}

// A character device where an output goes (a clone of /dev/full, which needs root), else a
// named pipe: both are files a write-then-rename would replace. Returns whether it is a device.
bool make_special_file(const fs::path& path) {
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) return true;
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return false;
}

void expect_still_special(const fs::path& path, bool device) {
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0) << path << " is gone";
  EXPECT_TRUE(device ? S_ISCHR(st.st_mode) : S_ISFIFO(st.st_mode)) << path << " was replaced";
}

// No writer may replace a device node: explain -o / --json / --render / --compare, run
// --output-dir and --save-inputs refuse before any work, and the node stays.
TEST(HostileTrial, WritersRefuseDeviceNodes) {
  ScratchDir dir;
  const fs::path node = dir.path / "node";
  const bool device = make_special_file(node);
  const std::string n = node.string();
  for (const std::string& args :
       {"explain " + kTinyNet + " -o " + n + " --no-progress", "explain " + kTinyNet + " --json " + n + " --no-progress",
        "explain --render " + kTinyNet + " -o " + n, "explain --compare " + kTinyNet + " " + kTinyNet + " -o " + n}) {
    expect_refusal(args, 1, {n, "not a regular file", "give a regular file or a new path"});
    expect_still_special(node, device);
  }
  // A device named like the output run writes (a first run tells the file's name).
  const fs::path out = dir.path / "out";
  fs::create_directories(out);
  const std::string model = relu_model(dir, {1, 4});
  const auto listed = run_cli("run " + model + " --random --output-dir " + out.string(), true);
  ASSERT_EQ(listed.status, 0) << listed.output;
  std::string written;
  for (const auto& e : fs::directory_iterator(out)) written = e.path().filename().string();
  ASSERT_FALSE(written.empty());
  fs::remove(out / written);
  const bool out_device = make_special_file(out / written);
  expect_refusal("run " + model + " --random --output-dir " + out.string(), 1, {written, "not a regular file"});
  expect_still_special(out / written, out_device);
  const fs::path in = dir.path / "in";
  fs::create_directories(in);
  const bool in_device = make_special_file(in / "x.npy");
  expect_refusal("run " + model + " --random --save-inputs " + in.string(), 1, {"x.npy", "not a regular file"});
  expect_still_special(in / "x.npy", in_device);
}

// Results printed to a full standard output are a failure, not exit 0 with nothing said.
TEST(HostileTrial, AFullStandardOutputFails) {
  ScratchDir dir;
  const std::string model = relu_model(dir, {1, 4});
  for (const std::string& args : {"run " + model + " --random", "info " + model}) {
    const auto r = run_shell(std::string(OCTET_CLI) + " " + args + " 2>&1 >/dev/full");
    EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("cannot write the results to standard output"), std::string::npos) << r.output;
  }
}

// eval scores classes: a model whose output is an image is refused with one line that points
// to run and diff, before any data is read (this one has no card and no --data).
TEST(HostileTrial, EvalRefusesModelsThatAreNotClassifiers) {
  ScratchDir dir;
  const std::string model = relu_model(dir, {-1, 3, 28, 28});
  expect_refusal("eval " + model + " --data fashion-mnist:test --no-progress", 1,
                 {"not [batch, classes]", "[N,3,28,28]", "octet run", "octet diff"});
}

// ONNX Clip is min(max(x, lo), hi): with lo > hi every value is hi (as ONNX Runtime gives),
// with the bounds as constants and as run-time inputs.
TEST(HostileTrial, ClipWithMinAboveMaxGivesMax) {
  ScratchDir dir;
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 64});
  b.output(b.node("Clip", {x, b.constant(TensorValue::scalar_f32(5.0f)), b.constant(TensorValue::scalar_f32(1.0f))}));
  const std::string model = save(b, dir, "clip.onnx");
  for (const std::string isa : {"scalar", "avx2"}) {
    const fs::path out = dir.path / ("out_" + isa);
    const auto r = run_cli("--isa " + isa + " run " + model + " --random --random-range -10 10 --output-dir " + out.string(), true);
    if (r.output.find("does not run") != std::string::npos) continue;  // a CPU without AVX2
    ASSERT_EQ(r.status, 0) << r.output;
    for (const auto& e : fs::directory_iterator(out)) {
      const auto a = octet::npy::read(e.path().string());
      for (int64_t i = 0; i < a.count(); ++i) ASSERT_EQ(a.as<float>()[i], 1.0f) << isa << " value " << i;
    }
  }
}

// A step of INT64_MIN cannot be negated in int64: Slice(starts=-1, ends=INT64_MIN, step=INT64_MIN)
// takes the last element, as ONNX Runtime does ([1,3,8,1], not [1,3,8,0]).
TEST(HostileTrial, SliceWithStepInt64MinTakesOneElement) {
  ScratchDir dir;
  OnnxBuilder b(13);
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  auto x = b.input("x", {1, 3, 8, 8});
  b.output(b.node("Slice", {x, b.initializer_i64("starts", {1}, {-1}), b.initializer_i64("ends", {1}, {lowest}),
                            b.initializer_i64("axes", {1}, {3}), b.initializer_i64("steps", {1}, {lowest})}));
  const std::string model = save(b, dir, "slice.onnx");
  const fs::path out = dir.path / "out";
  const fs::path in = dir.path / "in";
  const auto r = run_cli("run " + model + " --random --output-dir " + out.string() + " --save-inputs " + in.string(), true);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto x_values = octet::npy::read((in / "x.npy").string());
  for (const auto& e : fs::directory_iterator(out)) {
    const auto y = octet::npy::read(e.path().string());
    ASSERT_EQ(y.shape, (std::vector<int64_t>{1, 3, 8, 1}));
    for (int64_t row = 0; row < 24; ++row) EXPECT_EQ(y.as<float>()[row], x_values.as<float>()[row * 8 + 7]) << row;
  }
  // The largest positive step takes the first element only.
  OnnxBuilder c(13);
  auto cx = c.input("x", {1, 3, 8, 8});
  c.output(c.node("Slice", {cx, c.initializer_i64("starts", {1}, {0}), c.initializer_i64("ends", {1}, {8}),
                            c.initializer_i64("axes", {1}, {3}),
                            c.initializer_i64("steps", {1}, {std::numeric_limits<int64_t>::max()})}));
  const auto info = run_cli("info " + save(c, dir, "slice_max.onnx"), true);
  EXPECT_NE(info.output.find("[1,3,8,1]"), std::string::npos) << info.output;
}

// NaN against NaN is the same value: a NaN input must not "depart" at the input itself.
TEST(HostileTrial, DiffTakesNanForNan) {
  ScratchDir dir;
  const std::string model = relu_model(dir, {1, 4});
  octet::npy::Array a = octet::npy::make(octet::npy::DType::f32, {1, 4});
  const float values[] = {std::nanf(""), -1.0f, std::numeric_limits<float>::infinity(), 2.0f};
  for (int i = 0; i < 4; ++i) a.as<float>()[i] = values[i];
  const std::string input = (dir.path / "nan.npy").string();
  octet::npy::write(input, a);
  const auto r = run_cli("diff " + model + " --input " + input + " --all", true);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("no tensor departs"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("nan.npy"), std::string::npos) << "the input is not a step's output\n" << r.output;
  EXPECT_EQ(r.output.find(" x "), std::string::npos) << "the model input is not compared\n" << r.output;
}

// A card whose std is negative, or with three means for a one-channel model, is refused.
TEST(HostileTrial, ModelCardsThatDoNotFitAreRefused) {
  ScratchDir dir;
  const fs::path model = dir.path / "tiny.onnx";
  fs::copy_file(kTinyNet, model);
  auto card = nlohmann::json::parse(std::ifstream(fs::path(kTinyNet).replace_extension(".json")));
  const fs::path card_path = dir.path / "tiny.json";
  auto write_card = [&](const nlohmann::json& j) { std::ofstream(card_path) << j.dump(); };

  auto negative = card;
  negative["input"]["std"] = {-0.35f};
  write_card(negative);
  expect_refusal("eval " + model.string() + " --limit 10 --no-progress", 1, {"tiny.json", "std must be positive"});

  auto three = card;
  three["input"]["mean"] = {0.1f, 0.2f, 0.3f};
  write_card(three);
  expect_refusal("eval " + model.string() + " --limit 10 --no-progress", 1,
                 {"tiny.json", "mean has 3 values for an input of 1 channel"});
}

// Errors that used to be unclear.
TEST(HostileTrial, UnclearErrorsSayWhatIsWrong) {
  ScratchDir dir;
  const std::string model = relu_model(dir, {1, 4});
  expect_refusal("run " + model + " --random --random-range 1 0", 2, {"--random-range", "LO must be below HI"});
  expect_refusal("run " + model + " --random --random-range 0 nan", 2, {"'nan' is not a finite number"});
  expect_refusal("diff " + model + " --random-range 1 0", 2, {"LO must be below HI"});
  ScratchDir a, b;
  for (const std::string t : {"-1", "nan"}) {
    expect_refusal("compare " + a.path.string() + " " + b.path.string() + " --tolerance " + t, 2,
                   {"--tolerance", "must be zero or a positive number"});
    expect_refusal("diff " + model + " --tolerance " + t, 2, {"--tolerance"});
  }

  // A declared extent of -5 is a broken file, not a second symbolic batch.
  OnnxBuilder m(13);
  m.output(m.node("Relu", {m.input("x", {1, 2, 4})}));
  m.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-5);
  expect_refusal("info " + save(m, dir, "minus5.onnx") + " --batch 3", 1, {"minus5.onnx", "'x'", "-5", "axis 1"});

  // Concat of float with int64: the type is the problem, not the shape.
  OnnxBuilder c(13);
  c.output(c.node("Concat", {c.input("a", {1, 3, 4, 4}), c.input("b", {1, 3, 4, 4}, ElemType::s64)}, {{"axis", 1}}));
  expect_refusal("info " + save(c, dir, "concat.onnx"), 1, {"concat.onnx", "int64", "float32", "one type"});

  // Errors found only while running name the model file too.
  OnnxBuilder g(13);
  auto data = g.initializer("data", {4}, {1, 2, 3, 4});
  g.output(g.node("Gather", {data, g.input("i", {2}, ElemType::s64)}));
  const std::string gather = save(g, dir, "gather.onnx");
  octet::npy::Array idx = octet::npy::make(octet::npy::DType::s64, {2});
  idx.as<int64_t>()[0] = 0;
  idx.as<int64_t>()[1] = 40;
  const std::string idx_file = (dir.path / "i.npy").string();
  octet::npy::write(idx_file, idx);
  expect_refusal("run " + gather + " --input " + idx_file, 1, {"gather.onnx", "Gather", "out of range"});

  OnnxBuilder q(13);
  q.output(q.node_multi("DynamicQuantizeLinear", {q.input("x", {1, 4})}, 3)[0], ElemType::u8);
  const std::string dql = save(q, dir, "dql.onnx");
  octet::npy::Array nan = octet::npy::make(octet::npy::DType::f32, {1, 4});
  for (int i = 0; i < 4; ++i) nan.as<float>()[i] = i == 2 ? std::nanf("") : float(i);
  const std::string nan_file = (dir.path / "nan.npy").string();
  octet::npy::write(nan_file, nan);
  expect_refusal("run " + dql + " --input " + nan_file, 1, {"dql.onnx", "DynamicQuantizeLinear", "NaN"});
}

}  // namespace hostile_trial
