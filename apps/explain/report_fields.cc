#include "apps/explain/report_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "apps/explain/markup.h"

namespace octet::explain {

void Field::fail(std::string_view what) const { throw std::runtime_error(fmt::format("{}: {}", path_, what)); }

Field Field::operator[](std::string_view key) const {
  const std::string path = fmt::format("{}.{}", path_, key);
  if (!present()) return Field(path);
  if (!value_->is_object()) fail("expected an object");
  const auto it = value_->find(key);
  return it == value_->end() ? Field(path) : Field(*it, path);
}

std::vector<Field> Field::items() const {
  std::vector<Field> out;
  if (!present()) return out;
  if (!value_->is_array()) fail("expected an array");
  for (size_t i = 0; i < value_->size(); ++i) out.emplace_back((*value_)[i], fmt::format("{}[{}]", path_, i));
  return out;
}

std::vector<std::pair<std::string, Field>> Field::members() const {
  std::vector<std::pair<std::string, Field>> out;
  if (!present()) return out;
  if (!value_->is_object()) fail("expected an object");
  for (const auto& [key, value] : value_->items())
    out.emplace_back(key, Field(value, fmt::format("{}.{}", path_, key)));
  return out;
}

std::optional<double> Field::number() const {
  if (!present()) return std::nullopt;
  if (!value_->is_number()) fail("expected a number");
  const double v = value_->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> Field::integer() const {
  if (!present()) return std::nullopt;
  if (value_->is_number_integer()) return value_->get<int64_t>();
  // 16.0 is a batch of 16; 16.5 is not.
  const auto v = number();
  if (!v || *v != std::floor(*v) || std::fabs(*v) > 9.0e15) fail("expected an integer");
  return int64_t(*v);
}

std::optional<std::string> Field::string() const {
  if (!present()) return std::nullopt;
  if (!value_->is_string()) fail("expected a string");
  return value_->get<std::string>();
}

std::optional<bool> Field::boolean() const {
  if (!present()) return std::nullopt;
  if (!value_->is_boolean()) fail("expected true or false");
  return value_->get<bool>();
}

double Field::need_number() const {
  if (!present()) fail("missing");
  if (auto v = number()) return *v;
  fail("expected a finite number");
}

int64_t Field::need_integer() const {
  if (!present()) fail("missing");
  return *integer();
}

std::string Field::need_string() const {
  if (!present()) fail("missing");
  return *string();
}

std::optional<std::string> Field::any_text() const {
  if (!present()) return std::nullopt;
  const auto& v = *value_;
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return number() ? format_sig(*number()) : std::optional<std::string>();
  std::string out;
  if (v.is_array()) {
    for (const auto& item : items()) out += (out.empty() ? "" : ", ") + item.any_text().value_or("null");
    return "[" + out + "]";
  }
  for (const auto& [key, value] : members())
    out += (out.empty() ? "" : "; ") + key + ": " + value.any_text().value_or("null");
  return out;
}

}  // namespace octet::explain
