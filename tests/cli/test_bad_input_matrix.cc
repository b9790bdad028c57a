// The bad-input matrix (issue 13): every case is a file or an argument a careless or hostile
// user could hand to the CLI, built here by the suite (models through the ONNX protobuf API,
// .npy / CIFAR / IDX / image files by hand). Each must end in exactly one line on stderr, the
// documented exit status (1 bad input, 2 bad usage), the file / node / option named, nothing
// half-written, within a time limit and a memory bound: the Release build runs the CLI under
// an address-space limit (ulimit -v), and every build checks the child's peak RSS.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/util/cli_runner.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/sanitizer.h"
#include "io/npy.h"

namespace {

namespace fs = std::filesystem;
using octet::testing::ElemType;
using octet::testing::OnnxBuilder;
using octet::testing::ScratchDir;

constexpr long kAddressSpaceMiB = 2048;  // the limit under which the Release CLI runs
constexpr long kPeakRssMiB = 1024;       // the bound for inputs under 10 MB
constexpr int kSecondsEach = 60;

const fs::path kSource = OCTET_SOURCE_DIR;
const std::string kTinyNet = (kSource / "models" / "tinynet.onnx").string();

struct Case {
  Case(std::string n, std::function<std::string(const std::filesystem::path&)> f, int st, std::vector<std::string> s,
       std::vector<std::string> a = {}, bool limit = false)
      : name(std::move(n)), setup(std::move(f)), status(st), says(std::move(s)), absent(std::move(a)),
        needs_address_limit(limit) {}
  std::string name;
  // Writes the case's files into `dir` and returns the CLI arguments.
  std::function<std::string(const fs::path& dir)> setup;
  int status;                       // 1: bad input, 2: bad usage
  std::vector<std::string> says;    // pieces the line must hold; "{dir}" stands for the folder
  std::vector<std::string> absent;  // paths under dir that must not exist afterwards
  bool needs_address_limit;         // allocates beyond the machine without one: Release only
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string save(OnnxBuilder& b, const fs::path& dir, const std::string& name) {
  const fs::path p = dir / name;
  b.save(p.string());
  return p.string();
}

// x[1,3,8,8] -> Relu: a model that loads, for cases about everything but the model.
std::string small_model(const fs::path& dir) {
  OnnxBuilder b(13);
  b.output(b.node("Relu", {b.input("x", {-1, 3, 8, 8})}, {}, "relu"));
  return save(b, dir, "small.onnx");
}

void write_npy(const fs::path& p, octet::npy::DType dtype, std::vector<int64_t> shape) {
  octet::npy::write(p.string(), octet::npy::make(dtype, std::move(shape)));
}

// An IDX header: magic 0x0000080N (unsigned bytes, N dims) then N big-endian extents.
std::string idx_header(std::vector<uint32_t> dims) {
  std::string h = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) h.push_back(static_cast<char>((d >> s) & 0xff));
  return h;
}

std::string relu_on(const fs::path& dir, const std::string& name, const std::vector<int64_t>& dims) {
  OnnxBuilder b(13);
  b.output(b.node("Relu", {b.input("x", dims)}, {}, "relu"));
  return save(b, dir, name);
}

std::vector<Case> cases() {
  using P = const fs::path&;
  return {
      // --- model files that are not models
      {"EmptyFile", [](P d) { write_bytes(d / "e.onnx", ""); return "info " + (d / "e.onnx").string(); }, 1,
       {"e.onnx", "empty"}},
      {"RandomBytes", [](P d) { write_bytes(d / "r.onnx", std::string(4096, '\xa7')); return "info " + (d / "r.onnx").string(); },
       1, {"r.onnx", "not a valid ONNX model"}},
      {"TruncatedModel",
       [](P d) {
         std::ifstream in(kTinyNet, std::ios::binary);
         std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
         write_bytes(d / "t.onnx", bytes.substr(0, bytes.size() / 2));
         return "info " + (d / "t.onnx").string();
       },
       1, {"t.onnx", "truncated"}},
      {"MissingModel", [](P d) { return "info " + (d / "nothing.onnx").string(); }, 2, {"nothing.onnx"}},
      {"FolderAsModel", [](P d) { fs::create_directories(d / "m.onnx"); return "info " + (d / "m.onnx").string(); }, 2,
       {"m.onnx"}},
      {"FifoAsModel", [](P d) { mkfifo((d / "p.onnx").c_str(), 0600); return "info " + (d / "p.onnx").string(); }, 1,
       {"p.onnx", "not a regular file"}},
      {"NoGraph",
       [](P d) {
         OnnxBuilder b(13);
         b.graph().Clear();
         return "info " + save(b, d, "g.onnx");
       },
       1, {"g.onnx", "no graph"}},
      // --- models octet must refuse, naming the node
      {"UnsupportedOp",
       [](P d) {
         OnnxBuilder b(13);
         b.output(b.node("Frobnicate", {b.input("x", {1, 4})}, {}, "frob"));
         return "info " + save(b, d, "op.onnx");
       },
       1, {"op.onnx", "'frob'", "Frobnicate", "opset 13"}},
      {"UnsupportedDomain",
       [](P d) {
         OnnxBuilder b(13);
         auto y = b.node("Relu", {b.input("x", {1, 4})}, {}, "relu");
         b.set_domain(y, "com.example");
         b.output(y);
         return "info " + save(b, d, "dom.onnx");
       },
       1, {"dom.onnx", "'relu'", "com.example"}},
      {"OpsetTooNew", [](P d) {
         OnnxBuilder b(99);
         b.output(b.node("Relu", {b.input("x", {1, 4})}));
         return "info " + save(b, d, "new.onnx");
       },
       1, {"new.onnx", "opset 99", "newer"}},
      {"IrVersionTooNew", [](P d) {
         OnnxBuilder b(13);
         b.output(b.node("Relu", {b.input("x", {1, 4})}));
         b.model().set_ir_version(99);
         return "info " + save(b, d, "ir.onnx");
       },
       1, {"ir.onnx", "IR version 99"}},
      {"TwoProducersOfOneValue",
       [](P d) {
         OnnxBuilder b(13);
         auto x = b.input("x", {1, 4});
         b.node_multi("Relu", {x}, 1, {}, "first", {"y"});
         b.node_multi("Sigmoid", {x}, 1, {}, "second", {"y"});
         b.output("y");
         return "info " + save(b, d, "dup.onnx");
       },
       1, {"dup.onnx", "'second'", "'y'", "already produced by node 'first'"}},
      {"NodeOverwritesAGraphInput",
       [](P d) {
         OnnxBuilder b(13);
         auto x = b.input("x", {1, 4});
         b.node_multi("Relu", {x}, 1, {}, "relu", {"x"});
         b.output("x");
         return "info " + save(b, d, "in.onnx");
       },
       1, {"in.onnx", "'relu'", "graph input"}},
      {"InputNeverProduced",
       [](P d) {
         OnnxBuilder b(13);
         b.output(b.node("Add", {b.input("x", {1, 4}), "ghost"}, {}, "add"));
         return "info " + save(b, d, "ghost.onnx");
       },
       1, {"ghost.onnx", "'add'", "'ghost'"}},
      {"OutputNeverProduced",
       [](P d) {
         OnnxBuilder b(13);
         b.node("Relu", {b.input("x", {1, 4})});
         b.output("nowhere");
         return "info " + save(b, d, "out.onnx");
       },
       1, {"out.onnx", "'nowhere'", "never produced"}},
      {"MaxPoolPadsAsLargeAsTheKernel",
       [](P d) {
         OnnxBuilder b(13);
         b.output(b.node("MaxPool", {b.input("x", {1, 3, 8, 8})}, {{"kernel_shape", {2, 2}}, {"pads", {2, 2, 2, 2}}}, "pool"));
         return "info " + save(b, d, "pool.onnx");
       },
       1, {"pool.onnx", "'pool'", "smaller than kernel_shape"}},
      {"AttributeOfTheWrongType",
       [](P d) {
         OnnxBuilder b(13);
         b.output(b.node("Softmax", {b.input("x", {1, 4})}, {{"axis", 1.5f}}, "soft"));
         return "info " + save(b, d, "attr.onnx");
       },
       1, {"attr.onnx", "'soft'", "axis"}},
      {"ConvChannelMismatch",
       [](P d) {
         OnnxBuilder b(13);
         auto w = b.random_normal_init("w", {8, 4, 3, 3});
         b.output(b.node("Conv", {b.input("x", {1, 3, 8, 8}), w}, {}, "conv"));
         return "info " + save(b, d, "conv.onnx");
       },
       1, {"conv.onnx", "'conv'"}},
      {"ReshapeWithTwoUnknowns",
       [](P d) {
         OnnxBuilder b(13);
         b.output(b.node("Reshape", {b.input("x", {1, 12}), b.initializer_i64("s", {2}, {-1, -1})}, {}, "reshape"));
         return "info " + save(b, d, "reshape.onnx");
       },
       1, {"reshape.onnx", "'reshape'"}},
      {"MatMulShapesDisagree",
       [](P d) {
         OnnxBuilder b(13);
         b.output(b.node("MatMul", {b.input("x", {1, 5}), b.random_normal_init("w", {6, 3})}, {}, "mm"));
         return "info " + save(b, d, "mm.onnx");
       },
       1, {"mm.onnx", "'mm'"}},
      {"ConcatAxisOutOfRange",
       [](P d) {
         OnnxBuilder b(13);
         auto x = b.input("x", {1, 4});
         b.output(b.node("Concat", {x, x}, {{"axis", 7}}, "cat"));
         return "info " + save(b, d, "cat.onnx");
       },
       1, {"cat.onnx", "'cat'", "axis"}},
      {"SymbolicImageSize", [](P d) { return "info " + relu_on(d, "sym.onnx", {-1, 3, -2, -3}); }, 1,
       {"sym.onnx", "input 'x'", "axes 0, 2, 3", "fixed"}},
      {"InputWithoutShape",
       [](P d) {
         OnnxBuilder b(13);
         auto x = b.input("x", {1, 4});
         b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
         b.output(b.node("Relu", {x}));
         return "info " + save(b, d, "noshape.onnx");
       },
       1, {"noshape.onnx", "'x'", "no declared shape"}},
      {"StringInput", [](P d) {
         OnnxBuilder b(13);
         auto x = b.input("x", {1, 4});
         b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
         b.output(b.node("Identity", {x}));
         return "info " + save(b, d, "str.onnx");
       },
       1, {"str.onnx", "'x'", "STRING"}},
      {"ExternalData",
       [](P d) {
         OnnxBuilder b(13);
         auto w = b.initializer("w", {4}, {1, 2, 3, 4});
         b.output(b.node("Add", {b.input("x", {1, 4}), w}));
         auto* t = b.graph().mutable_initializer(0);
         t->clear_float_data();
         t->set_data_location(onnx::TensorProto::EXTERNAL);
         auto* e = t->add_external_data();
         e->set_key("location");
         e->set_value("weights.bin");
         return "info " + save(b, d, "ext.onnx");
       },
       1, {"ext.onnx", "'w'", "external"}},
      // --- sizes that overflow or exceed any machine
      {"ConvWeightWithoutItsData",
       [](P d) {
         OnnxBuilder b(13);
         auto w = b.initializer("w", {1, 1, 1, 1}, {1.0f});
         b.output(b.node("Conv", {b.input("x", {1, 1, 4, 4}), w}));
         auto* t = b.graph().mutable_initializer(0);
         t->clear_dims();
         for (int64_t e : {int64_t{1} << 20, int64_t{1} << 20, int64_t{3}, int64_t{3}}) t->add_dims(e);
         return "info " + save(b, d, "bigw.onnx");
       },
       1, {"bigw.onnx", "'w'"}},
      {"ElementCountOverflows", [](P d) { return "run " + relu_on(d, "ovf.onnx", {1, 3, int64_t{1} << 31, int64_t{1} << 31}) + " --random"; },
       1, {"ovf.onnx", "input 'x'", "64-bit"}},
      {"PadByTwoToThe40",
       [](P d) {
         OnnxBuilder b(13);
         auto pads = b.initializer_i64("pads", {4}, {0, 0, 0, int64_t{1} << 40});
         b.output(b.node("Pad", {b.input("x", {1, 4}), pads}, {}, "pad"));
         return "run " + save(b, d, "pad.onnx") + " --random";
       },
       1, {"pad.onnx", "1 TiB"}},
      {"Input65536Squared", [](P d) { return "run " + relu_on(d, "wide.onnx", {1, 3, 65536, 65536}) + " --random"; },
       1, {"wide.onnx", "cannot allocate"}, {}, /*needs_address_limit=*/true},
      {"HugeBatch", [](P d) { return "run " + small_model(d) + " --random --batch 100000000"; }, 1, {"small.onnx"}, {},
       /*needs_address_limit=*/true},
      // --- data files
      {"NpyBadMagic",
       [](P d) {
         write_bytes(d / "x.npy", "NOTNUMPY" + std::string(100, ' '));
         return "run " + small_model(d) + " --input " + (d / "x.npy").string();
       },
       1, {"x.npy"}},
      {"NpyHugeGarbageHeader",
       [](P d) {
         std::string h = "\x93NUMPY";
         h += '\x01';
         h += '\x00';
         const std::string text = "{'descr': " + std::string(60000, 'Z');
         h += static_cast<char>(text.size() & 0xff);
         h += static_cast<char>(text.size() >> 8);
         write_bytes(d / "g.npy", h + text);
         return "run " + small_model(d) + " --input " + (d / "g.npy").string();
       },
       1, {"g.npy", "bytes)"}},
      {"NpyWrongDtype",
       [](P d) {
         write_npy(d / "f64.npy", octet::npy::DType::f64, {1, 3, 8, 8});
         return "run " + small_model(d) + " --input " + (d / "f64.npy").string();
       },
       1, {"f64.npy", "float64"}},
      {"NpyWrongShapeLeavesNoOutputs",
       [](P d) {
         write_npy(d / "s.npy", octet::npy::DType::f32, {1, 3, 9, 9});
         return "run " + small_model(d) + " --input " + (d / "s.npy").string() + " --output-dir " + (d / "outs").string();
       },
       1, {"'x'"}, {"outs/y.npy"}},
      {"NpyTruncatedData",
       [](P d) {
         write_npy(d / "t.npy", octet::npy::DType::f32, {1, 3, 8, 8});
         fs::resize_file(d / "t.npy", fs::file_size(d / "t.npy") - 10);
         return "run " + small_model(d) + " --input " + (d / "t.npy").string();
       },
       1, {"t.npy"}},
      {"CifarTruncatedRecord",
       [](P d) {
         write_bytes(d / "c.bin", std::string(3073 + 1000, '\x01'));
         return "eval " + kTinyNet + " --data cifar10:" + (d / "c.bin").string() + " --no-progress";
       },
       1, {"c.bin"}},
      {"IdxExtentsOfFourBillion",
       [](P d) {
         write_bytes(d / "i.idx", idx_header({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}) + std::string(64, '\0'));
         return "eval " + kTinyNet + " --data idx:" + (d / "i.idx").string() + " --no-progress";
       },
       1, {"i.idx"}},
      {"IdxBadMagic",
       [](P d) {
         write_bytes(d / "m.idx", std::string(64, '\x55'));
         return "eval " + kTinyNet + " --data idx:" + (d / "m.idx").string() + " --no-progress";
       },
       1, {"m.idx", "magic"}},
      {"CorruptPng",
       [](P d) {
         fs::create_directories(d / "imgs" / "0");
         write_bytes(d / "imgs" / "0" / "a.png", std::string("\x89PNG\r\n\x1a\n", 8) + std::string(200, '\x42'));
         return "eval " + kTinyNet + " --data images:" + (d / "imgs").string() + " --no-progress";
       },
       1, {"a.png"}},
      {"ImageFolderOfNoClass",
       [](P d) {
         fs::create_directories(d / "imgs" / "giraffe");
         const std::vector<unsigned char> px(28 * 28, 128);
         stbi_write_png((d / "imgs" / "giraffe" / "a.png").c_str(), 28, 28, 1, px.data(), 28);
         return "eval " + kTinyNet + " --data images:" + (d / "imgs").string() + " --no-progress";
       },
       1, {"'giraffe'"}},
      {"EmptyImageFolder",
       [](P d) {
         fs::create_directories(d / "imgs");
         return "eval " + kTinyNet + " --data images:" + (d / "imgs").string() + " --no-progress";
       },
       1, {"imgs"}},
      {"UnknownDataKind", [](P) { return "eval " + kTinyNet + " --data tarball:x.tgz --no-progress"; }, 1, {"tarball"}},
      {"CalibrationThatFailsLeavesNoModel",
       [](P d) {
         write_npy(d / "calib.npy", octet::npy::DType::f32, {4, 1, 5, 5});
         return "quantize " + kTinyNet + " -o " + (d / "q.onnx").string() + " --calib npy:" + (d / "calib.npy").string() +
                " --no-progress";
       },
       1, {"calib.npy"}, {"q.onnx"}},
      {"QuantizeIntoAFolder",
       [](P d) {
         fs::create_directories(d / "q.onnx");
         return "quantize " + kTinyNet + " -o " + (d / "q.onnx").string() + " --mode dynamic --no-progress";
       },
       1, {"q.onnx"}},
      // --- usage errors: exit 2, one "octet: usage:" line
      {"BatchZero", [](P d) { return "run " + small_model(d) + " --random --batch 0"; }, 2, {"--batch"}},
      {"ThreadsNotANumber", [](P d) { return "--threads many run " + small_model(d) + " --random"; }, 2, {"--threads"}},
      {"UnknownCommand", [](P) { return std::string("frobnicate"); }, 2, {"frobnicate"}},
      {"UnknownIsa", [](P d) { return "--isa avx9000 info " + small_model(d); }, 2, {"--isa"}},
      {"RunWithoutInputs", [](P d) { return "run " + small_model(d); }, 2, {"--input"}},
  };
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, OneLineTheRightStatusNothingLeftBehind) {
  const Case& c = GetParam();
  ScratchDir dir;
  const std::string args = c.setup(dir.path);
  // ASan aborts on a failed allocation unless told to return null, as a normal build throws.
  const std::string prefix = octet::testing::kUnderAddressSanitizer ? "ASAN_OPTIONS=allocator_may_return_null=1 "
                                        : "ulimit -v " + std::to_string(kAddressSpaceMiB * 1024) + " && ";
  auto r = octet::testing::run_cli_wrapped(prefix + "exec timeout -s KILL " + std::to_string(kSecondsEach) + " ", args);
  SCOPED_TRACE(args + "\n" + r.output);
  EXPECT_EQ(r.status, c.status);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1);
  EXPECT_EQ(r.output.rfind(c.status == 2 ? "octet: usage: " : "octet: error: ", 0), 0u);
  for (const auto& s : c.says) EXPECT_NE(r.output.find(s), std::string::npos) << "missing: " << s;
  for (const auto& p : c.absent) EXPECT_FALSE(fs::exists(dir.path / p)) << p << " was left behind";
  for (const auto& e : fs::directory_iterator(dir.path))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path() << " was left behind";
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss / 1024, kPeakRssMiB) << "peak RSS " << usage.ru_maxrss / 1024 << " MiB";
}

// ASan reserves terabytes of address space, so no ulimit -v holds the CLI under it: the cases
// that allocate beyond the machine without one exist only in the Release build (not as skips
// in the sanitizer build, where a skip would fail CI's tally).
std::vector<Case> cases_for_this_build() {
  std::vector<Case> all = cases();
  if (octet::testing::kUnderAddressSanitizer) std::erase_if(all, [](const Case& c) { return c.needs_address_limit; });
  return all;
}

INSTANTIATE_TEST_SUITE_P(Matrix, BadInput, ::testing::ValuesIn(cases_for_this_build()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
