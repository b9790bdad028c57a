// The Open Inference Protocol's request and response bodies (apps/serve/v2_protocol.h) as
// strings: JSON data flat and nested, binary tensors split after the JSON header, and each
// malformed request refused with 400 and a message that names what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "apps/serve/request_error.h"
#include "apps/serve/v2_protocol.h"

namespace octet::serve::v2_protocol_tests {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using namespace octet::serve::v2;

std::string bytes_of(const std::vector<float>& v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

// The status and message of the RequestError `f` throws (0 when it throws none).
template <class F>
std::pair<int, std::string> refusal(F&& f) {
  try {
    f();
  } catch (const RequestError& e) {
    return {e.status, e.what()};
  }
  return {0, ""};
}

const std::vector<TensorSpec> kSpecs = {{"x", ir::DType::f32, {-1, 2, 3}}, {"ids", ir::DType::s64, {-1}}};

TEST(V2Protocol, DatatypeNamesRoundTrip) {
  for (const char* n : {"FP32", "FP64", "UINT8", "INT8", "INT32", "INT64", "BOOL"})
    EXPECT_STREQ(datatype_name(*dtype_of(n)), n);
  EXPECT_FALSE(dtype_of("FP16"));
  EXPECT_FALSE(dtype_of("fp32"));  // the spec's strings are case-sensitive
}

TEST(V2Protocol, FlatAndNestedDataGiveTheSameTensor) {
  const json flat = {{"id", "r1"},
                     {"inputs", {{{"name", "x"}, {"shape", {1, 2, 3}}, {"datatype", "FP32"}, {"data", {1, 2, 3, 4, 5, 6.5}}},
                                 {{"name", "ids"}, {"shape", {1}}, {"datatype", "INT64"}, {"data", {-7}}}}}};
  json nested = flat;
  nested["inputs"][0]["data"] = json::parse("[[[1, 2, 3], [4, 5, 6.5]]]");
  for (const json& j : {flat, nested}) {
    InferRequest r = parse_infer_request(j.dump(), std::nullopt);
    EXPECT_EQ(r.id, "r1");
    const std::vector<ir::TensorData> in = inputs_in_model_order(kSpecs, r);
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(in[0].dims, (ir::Dims{1, 2, 3}));
    EXPECT_THAT(std::vector<float>(in[0].values<float>().begin(), in[0].values<float>().end()),
                ::testing::ElementsAre(1, 2, 3, 4, 5, 6.5f));
    EXPECT_EQ(in[1].values<int64_t>()[0], -7);
  }
}

TEST(V2Protocol, InputsComeInTheModelsOrder) {
  const json j = {{"inputs", {{{"name", "ids"}, {"shape", {2}}, {"datatype", "INT64"}, {"data", {1, 2}}},
                              {{"name", "x"}, {"shape", {2, 2, 3}}, {"datatype", "FP32"}, {"data", std::vector<float>(12, 0.5f)}}}}};
  InferRequest r = parse_infer_request(j.dump(), std::nullopt);
  const auto in = inputs_in_model_order(kSpecs, r);
  EXPECT_EQ(in[0].dtype, ir::DType::f32);
  EXPECT_EQ(in[1].dtype, ir::DType::s64);
}

TEST(V2Protocol, Float32SurvivesJsonBitForBit) {
  const std::vector<float> v = {0.1f, 1.0f / 3, -2.5e-38f, 3.4028235e38f, 1e-45f};
  std::vector<ir::TensorData> t(1);
  t[0].dtype = ir::DType::f32;
  t[0].dims = {5};
  t[0].bytes.resize(20);
  std::memcpy(t[0].bytes.data(), v.data(), 20);
  const EncodedResponse e = encode_infer_response("m", "fp32", nullptr, {{"y", false}}, {&t[0]});
  EXPECT_FALSE(e.header_length);
  const json out = json::parse(e.body);
  EXPECT_EQ(out["model_name"], "m");
  EXPECT_EQ(out["model_version"], "fp32");
  EXPECT_FALSE(out.contains("id"));
  // Read back as a request would be.
  const json req = {{"inputs", {{{"name", "y"}, {"shape", {5}}, {"datatype", "FP32"}, {"data", out["outputs"][0]["data"]}}}}};
  InferRequest r = parse_infer_request(req.dump(), std::nullopt);
  EXPECT_EQ(r.inputs[0].tensor.bytes, t[0].bytes);
}

TEST(V2Protocol, BinaryInputsAreSplitInInputOrder) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const int64_t ids[2] = {42, -1};
  const json j = {{"inputs",
                   {{{"name", "x"}, {"shape", {1, 2, 3}}, {"datatype", "FP32"}, {"parameters", {{"binary_data_size", 24}}}},
                    {{"name", "ids"}, {"shape", {2}}, {"datatype", "INT64"}, {"parameters", {{"binary_data_size", 16}}}}}}};
  const std::string header = j.dump();
  const std::string body = header + bytes_of(x) + std::string(reinterpret_cast<const char*>(ids), 16);
  InferRequest r = parse_infer_request(body, header.size());
  EXPECT_EQ(r.inputs[0].tensor.values<float>()[5], 6.0f);
  EXPECT_EQ(r.inputs[1].tensor.values<int64_t>()[0], 42);
  EXPECT_EQ(r.inputs[1].tensor.values<int64_t>()[1], -1);
}

TEST(V2Protocol, BinaryOutputsFollowTheHeader) {
  ir::TensorData a = ir::TensorData::f32({2}, std::vector<float>{1.5f, -2});
  ir::TensorData b = ir::TensorData::s64({1}, std::vector<int64_t>{9});
  const EncodedResponse e = encode_infer_response("m", "int8", "q", {{"a", true}, {"b", false}}, {&a, &b});
  ASSERT_TRUE(e.header_length);
  const json head = json::parse(e.body.substr(0, *e.header_length));
  EXPECT_EQ(head["id"], "q");
  EXPECT_EQ(head["outputs"][0]["parameters"]["binary_data_size"], 8);
  EXPECT_FALSE(head["outputs"][0].contains("data"));
  EXPECT_EQ(head["outputs"][1]["data"], json({9}));
  EXPECT_EQ(head["outputs"][1]["datatype"], "INT64");
  EXPECT_EQ(e.body.substr(*e.header_length), bytes_of({1.5f, -2}));
}

TEST(V2Protocol, OutputsAskedForByNameAndBinaryFlags) {
  const std::vector<TensorSpec> outs = {{"boxes", ir::DType::f32, {-1, 4}}, {"scores", ir::DType::f32, {-1}}};
  const json base = {{"inputs", {{{"name", "x"}, {"shape", {1}}, {"datatype", "FP32"}, {"data", {1}}}}}};
  json j = base;
  j["parameters"] = {{"binary_data_output", true}};
  auto all = outputs_to_send(outs, parse_infer_request(j.dump(), std::nullopt));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].binary && all[1].binary);
  j = base;
  j["outputs"] = {{{"name", "scores"}, {"parameters", {{"binary_data", true}}}}};
  auto one = outputs_to_send(outs, parse_infer_request(j.dump(), std::nullopt));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "scores");
  EXPECT_TRUE(one[0].binary);
  j["outputs"] = {{{"name", "nope"}}};
  EXPECT_EQ(refusal([&] { outputs_to_send(outs, parse_infer_request(j.dump(), std::nullopt)); }).first, 400);
}

TEST(V2Protocol, MalformedRequestsAre400WithAReason) {
  auto check = [](const std::string& body, std::optional<size_t> header, const std::string& says) {
    auto [status, message] = refusal([&] {
      InferRequest r = parse_infer_request(body, header);
      inputs_in_model_order(kSpecs, r);
    });
    EXPECT_EQ(status, 400) << body;
    EXPECT_THAT(message, HasSubstr(says)) << body;
  };
  auto one = [](json x) { return json{{"inputs", {x, {{"name", "ids"}, {"shape", {1}}, {"datatype", "INT64"}, {"data", {1}}}}}}.dump(); };
  const json good = {{"name", "x"}, {"shape", {1, 2, 3}}, {"datatype", "FP32"}, {"data", {1, 2, 3, 4, 5, 6}}};
  check("{\"inputs\": [", std::nullopt, "not valid JSON");
  check("[1]", std::nullopt, "not a JSON object");
  check("{}", std::nullopt, "no 'inputs'");
  json x = good;
  x["data"] = {1, 2, 3};
  check(one(x), std::nullopt, "has 3 elements, its shape holds 6");
  x["data"] = std::vector<int>(7, 1);
  check(one(x), std::nullopt, "more than the 6 elements");
  x = good;
  x["datatype"] = "FP16";
  check(one(x), std::nullopt, "not one octet runs");
  x["datatype"] = "INT64";
  check(one(x), std::nullopt, "is INT64, the model takes FP32");
  x = good;
  x["shape"] = {1, 3, 2};
  check(one(x), std::nullopt, "has shape [1,3,2], the model takes [-1,2,3]");
  x["shape"] = {1, -2, 3};
  check(one(x), std::nullopt, "not a list of non-negative integers");
  x = good;
  x["data"][0] = "one";
  check(one(x), std::nullopt, "is not a number");
  x = good;
  x["name"] = "y";
  check(one(x), std::nullopt, "no input 'y'");
  check(json{{"inputs", {good}}}.dump(), std::nullopt, "no input 'ids'");
  x = good;
  x["parameters"] = {{"binary_data_size", 24}};
  x.erase("data");
  const std::string header = one(x);
  check(header + std::string(20, 'a'), header.size(), "only 20 left");
  check(header + std::string(28, 'a'), header.size(), "4 bytes after the JSON header belong to no input");
  check(header, header.size() + 1, "the body has only");
  x["parameters"] = {{"binary_data_size", 20}};
  check(one(x) + std::string(20, 'a'), one(x).size(), "binary_data_size is 20 bytes but FP32 [1,2,3] needs 24");
  x = good;
  x["parameters"] = {{"binary_data_size", 24}};
  check(one(x), std::nullopt, "both 'data' and");
  x = good;
  x["data"] = json::parse(std::string(100, '[') + "1" + std::string(100, ']'));
  check(one(x), std::nullopt, "nests deeper");
  x = good;
  x["shape"] = {int64_t{1} << 40, int64_t{1} << 40, 3};
  check(one(x), std::nullopt, "too large");
  EXPECT_EQ(refusal([] { parse_header_length("12x"); }).first, 400);
  EXPECT_EQ(parse_header_length("120"), 120u);
}

TEST(V2Protocol, IntegersAreCheckedAgainstTheirRange) {
  const std::vector<TensorSpec> specs = {{"u", ir::DType::u8, {2}}};
  auto run = [&](json data) {
    InferRequest r = parse_infer_request(
        json{{"inputs", {{{"name", "u"}, {"shape", {2}}, {"datatype", "UINT8"}, {"data", data}}}}}.dump(), std::nullopt);
    return inputs_in_model_order(specs, r);
  };
  EXPECT_EQ(run({0, 255})[0].values<uint8_t>()[1], 255);
  EXPECT_THAT(refusal([&] { run({0, 256}); }).second, HasSubstr("does not fit"));
  EXPECT_THAT(refusal([&] { run({0, -1}); }).second, HasSubstr("does not fit"));
  EXPECT_THAT(refusal([&] { run({0, 1.5}); }).second, HasSubstr("not an integer"));
}

TEST(V2Protocol, MetadataMarksTheDynamicBatch) {
  const json m = tensor_metadata({"input", ir::DType::f32, {-1, 1, 28, 28}});
  EXPECT_EQ(m, json({{"name", "input"}, {"datatype", "FP32"}, {"shape", {-1, 1, 28, 28}}}));
}

}  // namespace
}  // namespace octet::serve::v2_protocol_tests
