// Careless and hostile input through the CLI (issue 13's first cases): sizes that overflow,
// files that are not files, more threads than cores, NaN in a parity check, class folders
// that must be matched by name. Each ends in one clear line and exit status 1 (or the right
// answer), never a crash, a hang or a silent wrong result.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>
#include <nlohmann/json.hpp>

#include "tests/util/cli_runner.h"
#include "tests/util/onnx_builder.h"
#include "io/datasets/dataset.h"
#include "io/npy.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using octet::testing::ElemType;
using octet::testing::OnnxBuilder;
using octet::testing::run_cli;
using octet::testing::ScratchDir;

const fs::path kSource = OCTET_SOURCE_DIR;

// One line, starting "octet: error: ", containing every piece of `says`, exit status 1.
void expect_clean_error(const std::string& args, const std::vector<std::string>& says) {
  auto r = run_cli(args, true);
  EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
  EXPECT_EQ(r.output.rfind("octet: error: ", 0), 0u) << args << "\n" << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << "\n" << r.output;
  for (const auto& s : says) EXPECT_NE(r.output.find(s), std::string::npos) << args << "\n" << r.output;
}

std::string relu_model(const ScratchDir& dir, const std::string& name, const std::vector<int64_t>& dims) {
  OnnxBuilder b(13);
  b.output(b.node("Relu", {b.input("x", dims)}));
  const std::string path = (dir.path / (name + ".onnx")).string();
  b.save(path);
  return path;
}

// Element counts that overflow 64 bits, or tensors beyond any memory: the random fill used to
// write past a wrapped-around arena (SIGSEGV).
TEST(HostileInput, ShapesThatOverflowAreRefused) {
  ScratchDir dir;
  const int64_t big = int64_t{1} << 62, huge = int64_t{1} << 31;
  expect_clean_error("run " + relu_model(dir, "count", {1, big}) + " --random", {"input 'x'", "1 TiB or more"});
  expect_clean_error("run " + relu_model(dir, "product", {1, 3, huge, huge}) + " --random",
                     {"input 'x'", "more elements than a 64-bit count holds"});
  // 256 GiB: allowed for one tensor, more than the machine has. (Sanitizer builds abort on a
  // failed allocation unless told to return null, as a normal build throws.)
  setenv("ASAN_OPTIONS", "allocator_may_return_null=1", 1);
  expect_clean_error("run " + relu_model(dir, "memory", {1, int64_t{1} << 36}) + " --random", {"cannot allocate"});
  unsetenv("ASAN_OPTIONS");
  expect_clean_error("run " + relu_model(dir, "batch", {-1, 1 << 20, 1 << 20}) + " --random --batch 100000000",
                     {"input 'x'"});
}

// Found by tests/fuzz/fuzz_loader: a Reshape target whose known extents overflow their product
// (undefined behaviour before the -1 was inferred).
TEST(HostileInput, ReshapeTargetThatOverflows) {
  ScratchDir dir;
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 4});
  b.output(b.node("Reshape", {x, b.initializer_i64("shape", {3}, {int64_t{1} << 40, int64_t{1} << 40, -1})}));
  const std::string path = (dir.path / "reshape.onnx").string();
  b.save(path);
  expect_clean_error("info " + path, {"Reshape", "64-bit count"});
}

// An initializer whose shape promises more data than the file holds: refused before any
// allocation (it used to end in std::bad_alloc).
TEST(HostileInput, InitializerLargerThanItsData) {
  ScratchDir dir;
  OnnxBuilder b(13);
  auto x = b.input("x", {1});
  auto w = b.initializer("w", {1}, {1.0f});
  b.output(b.node("Add", {x, w}));
  for (auto& t : *b.graph().mutable_initializer()) {
    t.clear_dims();
    t.add_dims(int64_t{1} << 40);
  }
  const std::string path = (dir.path / "w.onnx").string();
  b.save(path);
  expect_clean_error("info " + path, {"w.onnx", "'w'", "1099511627776"});
}

// Devices, FIFOs and files beyond protobuf's 2 GiB are refused before a byte is read (info
// /dev/zero used to grow to 16 GB and never return).
TEST(HostileInput, ModelThatIsNotARegularFile) {
  ScratchDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  expect_clean_error("info /dev/zero", {"/dev/zero", "not a regular file"});
  const std::string fifo = (dir.path / "pipe.onnx").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_clean_error("info " + fifo, {"pipe.onnx", "not a regular file"});
  const std::string sparse = (dir.path / "sparse.onnx").string();
  { std::ofstream(sparse).close(); }
  fs::resize_file(sparse, uintmax_t{3} << 30);  // 3 GiB of holes: no disk used
  expect_clean_error("info " + sparse, {"sparse.onnx", "2 GiB"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
}

// More threads than cores are capped with a warning, not left to spin for minutes.
TEST(HostileInput, MoreThreadsThanCores) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_cli("--threads 256 run " + (kSource / "models" / "resnet8.onnx").string() + " --random --batch 8", true);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: --threads 256 is more than"), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
}

// A parity check that meets a NaN or an infinity fails and says where.
TEST(HostileInput, CompareFailsOnNaN) {
  ScratchDir dir;
  fs::create_directories(dir.path / "a");
  fs::create_directories(dir.path / "b");
  auto write = [&](const fs::path& p, std::vector<float> v) {
    octet::npy::Array a;
    a.dtype = octet::npy::DType::f32;
    a.shape = {1, int64_t(v.size())};
    a.data.resize(v.size() * 4);
    std::memcpy(a.data.data(), v.data(), a.data.size());
    octet::npy::write(p.string(), a);
  };
  write(dir.path / "a" / "y.npy", {1.0f, std::numeric_limits<float>::quiet_NaN(), 0.5f});
  write(dir.path / "b" / "y.npy", {1.0f, 2.0f, 0.5f});
  auto r = run_cli("compare " + (dir.path / "a").string() + " " + (dir.path / "b").string(), true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("NaN or infinity"), std::string::npos) << r.output;
  write(dir.path / "a" / "y.npy", {1.0f, 2.0f, std::numeric_limits<float>::infinity()});
  write(dir.path / "b" / "y.npy", {1.0f, 2.0f, std::numeric_limits<float>::infinity()});
  EXPECT_EQ(run_cli("compare " + (dir.path / "a").string() + " " + (dir.path / "b").string(), true).status, 1);
}

// images:DIR class folders are labelled by the model card's class names (or numbers), not by
// their sorted order: ten folders named after TinyNet's classes used to score 36%.
TEST(HostileInput, ImageFoldersMapToTheCardsClasses) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is absent (apt install dataset-fashion-mnist)";
  ScratchDir dir;
  octet::data::LoadOptions lo;
  lo.limit = 300;
  const octet::data::Dataset d = octet::data::load_dataset("fashion-mnist:test", lo);
  const std::vector<std::string> folder_of = {"T-shirt_top", "trouser", "Pullover", "DRESS", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  for (int64_t i = 0; i < d.count(); ++i) {
    const fs::path folder = dir.path / "named" / folder_of[size_t(d.labels[size_t(i)])];
    fs::create_directories(folder);
    const std::string file = (folder / (std::to_string(i) + ".png")).string();
    ASSERT_TRUE(stbi_write_png(file.c_str(), 28, 28, 1, d.image(i), 28));
    // The same images under numeric folders.
    const fs::path numbered = dir.path / "numbered" / std::to_string(d.labels[size_t(i)]);
    fs::create_directories(numbered);
    ASSERT_TRUE(stbi_write_png((numbered / (std::to_string(i) + ".png")).string().c_str(), 28, 28, 1, d.image(i), 28));
  }
  const std::string model = (kSource / "models" / "tinynet.onnx").string();
  for (const char* set : {"named", "numbered"}) {
    auto r = run_cli("eval " + model + " --data images:" + (dir.path / set).string() +
                         " --latency-images 2 --json --no-progress",
                     false);
    ASSERT_EQ(r.status, 0) << r.output;
    const json j = json::parse(r.output);
    EXPECT_GT(j["octet"]["accuracy"]["top1"].get<double>(), 0.85) << set;
  }
  // A folder that names no class is an error that lists the classes.
  fs::create_directories(dir.path / "named" / "cat");
  ASSERT_TRUE(stbi_write_png((dir.path / "named" / "cat" / "x.png").string().c_str(), 28, 28, 1, d.image(0), 28));
  expect_clean_error("eval " + model + " --data images:" + (dir.path / "named").string() + " --no-progress",
                     {"'cat'", "Ankle boot (9)", "T-shirt/top (0)"});
}

// -o must be a regular file or a new path: writing beside it and renaming would replace a
// FIFO, a device or a symlink (and what it points to stays untouched).
TEST(HostileInput, QuantizeRefusesOutputsThatAreNotRegularFiles) {
  ScratchDir dir;
  const std::string model = (kSource / "models" / "tinynet.onnx").string();
  const fs::path fifo = dir.path / "out.onnx";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_clean_error("quantize " + model + " --mode dynamic -o " + fifo.string() + " --no-progress",
                     {"not a regular file"});
  const fs::path target = dir.path / "kept.txt", link = dir.path / "link.onnx";
  { std::ofstream(target) << "keep me"; }
  fs::create_symlink(target, link);
  expect_clean_error("quantize " + model + " --mode dynamic -o " + link.string() + " --no-progress",
                     {"symbolic link"});
  EXPECT_TRUE(fs::is_symlink(link));
  std::ifstream in(target);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "keep me");
}

// Two outputs whose names sanitize to the same file name both get written.
TEST(HostileInput, OutputDirNamesNeverCollide) {
  ScratchDir dir;
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 4});
  b.node_multi("Split", {x}, 2, {{"axis", int64_t{1}}}, "split", {"a/b", "a_b"});
  b.output("a/b");
  b.output("a_b");
  const std::string model = (dir.path / "two.onnx").string();
  b.save(model);
  auto r = run_cli("run " + model + " --random --output-dir " + (dir.path / "out").string(), false);
  ASSERT_EQ(r.status, 0) << r.output;
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path / "out")) ++files;
  EXPECT_EQ(files, 2) << r.output;
}

// The error contract: usage errors exit 2 with one "octet: usage:" line naming the option and
// a readable reason; --version works.
TEST(HostileInput, UsageErrorsAndVersion) {
  auto v = run_cli("--version", false);
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.output.rfind("octet ", 0), 0u) << v.output;
  const std::string model = (kSource / "models" / "tinynet.onnx").string();
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"eval " + model + " --batch 0", "--batch: must be a positive number, got '0'"},
           {"eval " + model + " --nonsense", "nonsense"},
           {"info", "model is required"},
           {"--isa sse9 info " + model, "--isa"},
           {"evaluate " + model,
            "unknown command 'evaluate' (commands: info, run, eval, quantize, compare, explain, atlas, diff, serve)"}}) {
    auto r = run_cli(args, true);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("octet: usage: ", 0), 0u) << args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << args << "\n" << r.output;
  }
}

// A model card whose class list does not fit the model's output is an error, not a report
// with wrong names; a quantized model counts its int8 weights as parameters; calibration on
// fewer images than asked for says so.
TEST(HostileInput, CardsCountsAndShortCalibrationSets) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is absent (apt install dataset-fashion-mnist)";
  ScratchDir dir;
  fs::copy_file(kSource / "models" / "tinynet.onnx", dir.path / "m.onnx");
  json card = json::parse(std::ifstream(kSource / "models" / "tinynet.json"));
  card["classes"] = {"a", "b"};
  std::ofstream(dir.path / "m.json") << card.dump();
  expect_clean_error("eval " + (dir.path / "m.onnx").string() + " --limit 8 --no-progress",
                     {"card names 2 classes", "10 scores"});

  const std::string model = (kSource / "models" / "tinynet.onnx").string();
  const std::string q = (dir.path / "q.onnx").string();
  auto r = run_cli("quantize " + model + " -o " + q + " --calib-count 5000 --per-class 1 --no-progress --json", false);
  EXPECT_NE(r.status, 0) << "--calib-count and --per-class exclude each other";
  fs::create_directories(dir.path / "six");
  octet::data::LoadOptions lo;
  lo.limit = 6;
  const auto d = octet::data::load_dataset("fashion-mnist:train", lo);
  for (int64_t i = 0; i < d.count(); ++i)
    ASSERT_TRUE(stbi_write_png((dir.path / "six" / (std::to_string(i) + ".png")).string().c_str(), 28, 28, 1,
                               d.image(i), 28));
  r = run_cli("quantize " + model + " -o " + q + " --calib images:" + (dir.path / "six").string() +
                  " --calib-count 5000 --no-progress --json",
              false);
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(r.output);
  ASSERT_EQ(j["calibration"]["warnings"].size(), 1u) << j["calibration"]["warnings"];
  EXPECT_NE(j["calibration"]["warnings"][0].get<std::string>().find("has only 6"), std::string::npos);
  auto fp32 = run_cli("info " + model + " --json", false), int8 = run_cli("info " + q + " --json", false);
  EXPECT_GE(json::parse(int8.output)["parameters"].get<int64_t>(), json::parse(fp32.output)["parameters"].get<int64_t>());
}

// eval's --threads is the thread count of both engines, and the report says what octet ran with.
TEST(HostileInput, EvalThreadsAreOctetsToo) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is absent (apt install dataset-fashion-mnist)";
  auto r = run_cli("eval " + (kSource / "models" / "tinynet.onnx").string() +
                       " --threads 2 --limit 16 --latency-images 2 --json --no-progress",
                   false);
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(r.output);
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  bool octet_row = false;
  for (const auto& row : j["latency"])
    if (!row["octet"].is_null()) {
      EXPECT_EQ(row["threads"].get<int>(), std::min(2, cores)) << row;
      octet_row = true;
    }
  EXPECT_TRUE(octet_row);
}

}  // namespace
