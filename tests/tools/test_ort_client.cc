// octet::ort::eval end to end: a whole "data set" run through tools/ort/ort_eval.mjs in batches,
// outputs concatenated in order, every run timed; and octet::ort::run's shared runner process
// (ort_run.mjs --jobs). Models written with the test OnnxBuilder.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/util/onnx_builder.h"
#include "tools/ort/ort_client.h"

namespace fs = std::filesystem;
using octet::npy::Array;
using octet::npy::DType;
using octet::ort::EvalOptions;
using octet::testing::ElemType;
using octet::testing::OnnxBuilder;

namespace {

#define SKIP_WITHOUT_ORT_CLIENT()                                                               \
  if (std::string why = octet::ort::unavailable_reason(); !why.empty()) GTEST_SKIP() << why

constexpr int64_t kRows = 10;

// x [N, 3] -> relu [N, 3] (named "relu/out", which the runner must sanitize), argmax [N] int64.
std::string write_relu_argmax_model(const fs::path& dir) {
  OnnxBuilder b(13);
  const auto x = b.input("x", {-1, 3});
  b.output(b.node_multi("Relu", {x}, 1, {}, "relu", {"relu/out"}).front(), ElemType::f32);
  b.output(b.node_multi("ArgMax", {x}, 1, {{"axis", 1}, {"keepdims", 0}}, "argmax", {"argmax"}).front(),
           ElemType::s64);
  const fs::path path = dir / "relu_argmax.onnx";
  b.save(path.string());
  return path.string();
}

// Row r is (r - 4.5, 2r - 9, 0.5 - r): every sign, and the arg max moves between columns.
Array rows(int64_t n) {
  std::vector<float> v;
  for (int64_t r = 0; r < n; ++r) v.insert(v.end(), {float(r) - 4.5f, 2.0f * float(r) - 9.0f, 0.5f - float(r)});
  return octet::npy::make_f32({n, 3}, v);
}

class OrtClient : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "octet-ort-client-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    model_ = write_relu_argmax_model(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::string model_;
};

std::vector<float> floats(const Array& a) { return {a.as<float>(), a.as<float>() + a.count()}; }
std::vector<int64_t> ints(const Array& a) { return {a.as<int64_t>(), a.as<int64_t>() + a.count()}; }

TEST_F(OrtClient, EvalConcatenatesBatchesInOrderAndTimesEveryRun) {
  SKIP_WITHOUT_ORT_CLIENT();
  EvalOptions opt;
  opt.batch = 4;
  opt.repeat = 2;
  const auto r = octet::ort::eval(model_, "x", rows(kRows), opt);

  ASSERT_EQ(r.outputs.size(), 2u);
  const Array& relu = r.outputs.at("relu/out");
  ASSERT_EQ(relu.dtype, DType::f32);
  EXPECT_EQ(relu.shape, (std::vector<int64_t>{kRows, 3}));
  std::vector<float> relu_want;
  std::vector<int64_t> argmax_want;
  const Array in = rows(kRows);
  for (int64_t i = 0; i < kRows; ++i) {
    const float* row = in.as<float>() + 3 * i;
    int64_t best = 0;
    for (int64_t c = 0; c < 3; ++c) {
      relu_want.push_back(row[c] > 0 ? row[c] : 0.0f);
      if (row[c] > row[best]) best = c;
    }
    argmax_want.push_back(best);
  }
  EXPECT_EQ(floats(relu), relu_want);
  const Array& argmax = r.outputs.at("argmax");
  ASSERT_EQ(argmax.dtype, DType::s64);
  EXPECT_EQ(argmax.shape, (std::vector<int64_t>{kRows}));
  EXPECT_EQ(ints(argmax), argmax_want);

  // 3 batches (4, 4, 2) per pass, 2 passes.
  EXPECT_EQ(r.images_per_run, (std::vector<int64_t>{4, 4, 2, 4, 4, 2}));
  ASSERT_EQ(r.batch_ms.size(), 6u);
  for (double ms : r.batch_ms) {
    EXPECT_GT(ms, 0.0);
    EXPECT_LT(ms, 10'000.0);
  }
  EXPECT_EQ(r.version, octet::ort::version());
  EXPECT_FALSE(r.version.empty());
}

TEST_F(OrtClient, EvalAgreesWithOneRunOverEverything) {
  SKIP_WITHOUT_ORT_CLIENT();
  const auto whole = octet::ort::run(model_, {{"x", rows(kRows)}});
  for (int batch : {1, 3, 10, 16}) {
    EvalOptions opt;
    opt.batch = batch;
    opt.warmup = 0;
    opt.threads = 2;
    const auto r = octet::ort::eval(model_, "x", rows(kRows), opt);
    ASSERT_EQ(r.outputs.size(), whole.size());
    for (const auto& [name, a] : whole) {
      EXPECT_EQ(r.outputs.at(name).shape, a.shape) << name << " batch " << batch;
      EXPECT_EQ(r.outputs.at(name).data, a.data) << name << " batch " << batch;
    }
    const std::size_t runs = (kRows + batch - 1) / batch;
    EXPECT_EQ(r.batch_ms.size(), runs) << "batch " << batch;
    int64_t images = 0;
    for (int64_t n : r.images_per_run) images += n;
    EXPECT_EQ(images, kRows) << "batch " << batch;
  }
}

TEST_F(OrtClient, LimitTimingTimesOnlyTheFirstBatchesButKeepsEveryOutput) {
  SKIP_WITHOUT_ORT_CLIENT();
  EvalOptions opt;
  opt.batch = 4;
  opt.repeat = 3;
  opt.limit_timing = 1;
  auto r = octet::ort::eval(model_, "x", rows(kRows), opt);
  EXPECT_EQ(r.images_per_run, (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(r.batch_ms.size(), 3u);
  EXPECT_EQ(r.outputs.at("relu/out").shape, (std::vector<int64_t>{kRows, 3}));
  EXPECT_EQ(r.outputs.at("argmax").shape, (std::vector<int64_t>{kRows}));

  opt.limit_timing = 0;  // outputs only
  r = octet::ort::eval(model_, "x", rows(kRows), opt);
  EXPECT_TRUE(r.batch_ms.empty());
  EXPECT_TRUE(r.images_per_run.empty());
  EXPECT_EQ(r.outputs.at("relu/out").shape, (std::vector<int64_t>{kRows, 3}));

  opt.limit_timing = 99;  // more than there are batches: every batch
  opt.repeat = 1;
  r = octet::ort::eval(model_, "x", rows(kRows), opt);
  EXPECT_EQ(r.images_per_run, (std::vector<int64_t>{4, 4, 2}));
}

TEST_F(OrtClient, ProgressLinesReachStderr) {
  SKIP_WITHOUT_ORT_CLIENT();
  EvalOptions opt;
  opt.batch = 1;
  opt.progress = true;
  ::testing::internal::CaptureStderr();
  const auto r = octet::ort::eval(model_, "x", rows(kRows), opt);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ort_eval: progress "), std::string::npos) << err;
  EXPECT_NE(err.find("(100%)"), std::string::npos) << err;
  EXPECT_EQ(r.batch_ms.size(), std::size_t(kRows));

  // The runner's error line goes into the exception only, not also to stderr.
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(octet::ort::eval(model_, "x", octet::npy::make(DType::f32, {kRows, 4}), opt), std::runtime_error);
  const std::string failed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(failed.find("failed"), std::string::npos) << failed;

  opt.progress = false;
  ::testing::internal::CaptureStderr();
  octet::ort::eval(model_, "x", rows(kRows), opt);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(OrtClient, OctetOrtDirPicksTheRunners) {
  SKIP_WITHOUT_ORT_CLIENT();
  const fs::path empty = dir_ / "no-runners";
  fs::create_directory(empty);
  ::setenv("OCTET_ORT_DIR", empty.c_str(), 1);
  try {
    octet::ort::eval(model_, "x", rows(kRows), {});
    ADD_FAILURE() << "ran without a runner";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((empty / "ort_eval.mjs").string() + " is missing"), std::string::npos)
        << e.what();
  }
  ::setenv("OCTET_ORT_DIR", (fs::path(OCTET_SOURCE_DIR) / "tools" / "ort").c_str(), 1);
  EXPECT_EQ(octet::ort::eval(model_, "x", rows(kRows), {}).outputs.size(), 2u);
  ::unsetenv("OCTET_ORT_DIR");
}

TEST_F(OrtClient, FailuresCarryOrtsMessageAndCleanUp) {
  SKIP_WITHOUT_ORT_CLIENT();
  // eval works under $TMPDIR: point it at a folder of ours to see that failures clean up.
  const fs::path tmp = dir_ / "tmp";
  fs::create_directory(tmp);
  ::setenv("TMPDIR", tmp.c_str(), 1);

  const fs::path bad = dir_ / "bad.onnx";
  std::ofstream(bad) << "this is not a protobuf";
  try {
    octet::ort::eval(bad.string(), "x", rows(kRows), {});
    ADD_FAILURE() << "a file that is not ONNX loaded";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ONNX Runtime failed on " + bad.string()), std::string::npos) << what;
    EXPECT_NE(what.find("onnxruntime load failed"), std::string::npos) << what;
    std::cout << "[ INFO     ] " << what << "\n";
  }
  try {
    octet::ort::eval(model_, "x", octet::npy::make(DType::f64, {kRows, 3}), {});
    ADD_FAILURE() << "a float64 input to a float32 model ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor(double)"), std::string::npos) << e.what();
  }
  try {
    octet::ort::eval(model_, "y", rows(kRows), {});
    ADD_FAILURE() << "ran with a wrong input name";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("has no input 'y' (inputs: x)"), std::string::npos) << e.what();
  }
  try {
    octet::ort::eval(model_, "x", octet::npy::make(DType::f32, {kRows, 4}), {});
    ADD_FAILURE() << "ran with 4 columns instead of 3";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("images 0..0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(octet::ort::eval((dir_ / "missing.onnx").string(), "x", rows(kRows), {}), std::runtime_error);

  EvalOptions zero_batch;
  zero_batch.batch = 0;
  EXPECT_THROW(octet::ort::eval(model_, "x", rows(kRows), zero_batch), std::invalid_argument);
  EXPECT_THROW(octet::ort::eval(model_, "x", octet::npy::make(DType::f32, {0, 3}), {}), std::invalid_argument);
  EXPECT_THROW(octet::ort::eval(model_, "x", octet::npy::make_f32({}, {1}), {}), std::invalid_argument);
  EXPECT_THROW(octet::ort::eval(model_, "x=", rows(kRows), {}), std::invalid_argument);

  for (const auto& e : fs::recursive_directory_iterator(tmp)) ADD_FAILURE() << "a failed run left " << e.path();
  ::unsetenv("TMPDIR");
}

// One runner process serves every run() of a process: a failed run leaves it usable, a runner
// that dies fails the run in progress with its message and is started again for the next one,
// and a change of OCTET_NODE starts another.
TEST_F(OrtClient, RunSharesOneRunnerThatSurvivesFailuresAndRestartsWhenItDies) {
  SKIP_WITHOUT_ORT_CLIENT();
  const auto good = [&] {
    const auto out = octet::ort::run(model_, {{"x", rows(3)}});
    EXPECT_EQ(ints(out.at("argmax")), (std::vector<int64_t>{2, 2, 2}));  // rows 0..2: column 2 is the largest
  };
  good();
  const fs::path bad = dir_ / "bad.onnx";
  std::ofstream(bad) << "this is not a protobuf";
  try {
    octet::ort::run(bad.string(), {{"x", rows(3)}});
    ADD_FAILURE() << "a file that is not ONNX loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ONNX Runtime failed on " + bad.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(octet::ort::run(model_, {{"y", rows(3)}}), std::runtime_error);
  good();

  // A "node" that starts like the runner, takes one job and dies without answering.
  const fs::path fake = dir_ / "dying-node";
  std::ofstream(fake) << "#!/bin/sh\necho onnxruntime-node 0.0.0\nread job\necho 'dying on purpose' >&2\nexit 3\n";
  ::chmod(fake.c_str(), 0755);
  ::setenv("OCTET_NODE", fake.c_str(), 1);
  try {
    octet::ort::run(model_, {{"x", rows(3)}});
    ADD_FAILURE() << "a runner that died answered";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("runner stopped: dying on purpose"), std::string::npos) << e.what();
  }
  ::unsetenv("OCTET_NODE");
  good();
}

}  // namespace
