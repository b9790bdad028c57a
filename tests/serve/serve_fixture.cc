#include "tests/serve/serve_fixture.h"

#include "apps/serve/stb_codecs.h"

namespace octet::testing {

std::string png_bytes(const data::Dataset& d, int64_t i) {
  return serve::encode_png(d.image(i), d.width, d.height, 1);
}

std::string pgm_bytes(const data::Dataset& d, int64_t i) {
  std::string s = "P5\n" + std::to_string(d.width) + " " + std::to_string(d.height) + "\n255\n";
  s.append(reinterpret_cast<const char*>(d.image(i)), size_t(d.image_bytes()));
  return s;
}

nlohmann::json get_json(httplib::Client& client, const std::string& path) {
  auto r = client.Get(path.c_str());
  if (!r || r->status != 200) return nullptr;
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

}  // namespace octet::testing
