#pragma once
// `octet serve` names files in its answers by their names only: a dataset described as
// "fashion-mnist test (10000 images, /usr/share/datasets/fashion-mnist)" is answered as
// "fashion-mnist test (10000 images, fashion-mnist)". Where the server's files live is no
// client's business (issue 32).
#include <string>
#include <string_view>

namespace octet::serve {

// `text` with every word that holds a '/' (a word ends at a space, comma, semicolon, quote or
// parenthesis) replaced by its last component: "models/tinynet.onnx" -> "tinynet.onnx",
// "/data/cifar/" -> "cifar". For descriptions and messages, not for labels ("T-shirt/top").
std::string without_paths(std::string_view text);

}  // namespace octet::serve
