#pragma once
// The Open Inference Protocol (KServe v2, REST) as bytes: an inference request's JSON, with
// Triton's binary tensor extension, into tensors; output tensors into the response JSON (and the
// raw bytes after it). No HTTP and no Session here, so the tests feed it strings.
//
// What the spec (and the extension) fix, and what this file chose where they leave room:
//   - a tensor's "data" is row-major, flat or nested; only the total count is checked against
//     the shape (nested lists are flattened in order, at most kMaxNesting deep);
//   - an input with parameters.binary_data_size takes that many bytes, little-endian row-major,
//     from the body after the JSON header (Inference-Header-Content-Length bytes), in input
//     order; the sizes must add up to exactly the bytes there are;
//   - an output is binary when its request names it with parameters.binary_data, else when the
//     request's parameters.binary_data_output is true; binary outputs carry
//     parameters.binary_data_size and their bytes follow the JSON header in output order.
// Every refusal is a RequestError(400) whose message names the tensor and what was expected.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "engine/session.h"

namespace octet::serve::v2 {

// "FP32", "UINT8", "INT64", ... <-> octet's element types (BOOL is b8, one byte of 0 or 1).
std::optional<ir::DType> dtype_of(std::string_view datatype);
const char* datatype_name(ir::DType t);

constexpr int kMaxNesting = 32;

struct InferInput {
  std::string name;
  ir::TensorData tensor;
};

struct RequestedOutput {
  std::string name;
  bool binary = false;
};

struct InferRequest {
  nlohmann::json id;  // echoed in the response; null when the request has none
  std::vector<InferInput> inputs;
  bool outputs_listed = false;            // the request named its outputs
  std::vector<RequestedOutput> outputs;   // those, when it did
  bool binary_output = false;             // parameters.binary_data_output
};

// The value of an Inference-Header-Content-Length header: a number of bytes (decimal digits).
size_t parse_header_length(const std::string& value);

// `body` is the whole HTTP body; `header_length` the Inference-Header-Content-Length header
// (absent: the whole body is the JSON). Throws RequestError(400).
InferRequest parse_infer_request(std::string_view body, std::optional<size_t> header_length);

// The request's inputs in the model's input order, each checked against its spec (name,
// datatype, rank and every fixed extent). Unknown or missing inputs, a wrong datatype or shape:
// RequestError(400).
std::vector<ir::TensorData> inputs_in_model_order(const std::vector<TensorSpec>& specs, InferRequest& request);

// Which of the model's outputs to send and how: the requested ones in the request's order, else
// all in the model's order. An unknown output name: RequestError(400).
std::vector<RequestedOutput> outputs_to_send(const std::vector<TensorSpec>& specs, const InferRequest& request);

struct EncodedResponse {
  std::string body;
  std::optional<size_t> header_length;  // set when binary bytes follow the JSON
};

// `tensors[i]` is the value of `outputs[i]`.
EncodedResponse encode_infer_response(const std::string& model, const std::string& version, const nlohmann::json& id,
                                      const std::vector<RequestedOutput>& outputs,
                                      const std::vector<const ir::TensorData*>& tensors);

// {"name", "datatype", "shape"} of a model input or output, -1 for a run-time extent.
nlohmann::json tensor_metadata(const TensorSpec& spec);

}  // namespace octet::serve::v2
