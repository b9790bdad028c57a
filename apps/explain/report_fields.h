#pragma once
// Checked reading of an explain report (docs/explain.md): every value carries its path
// ("report.speed[3].ms_per_image"), so a report whose field has the wrong type is refused with an
// error that names the field instead of crashing the renderer or printing garbage.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace octet::explain {

class Field {
 public:
  Field(const nlohmann::json& value, std::string path) : value_(&value), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  // Absent and null are the same: the schema writes an undefined value either way.
  bool present() const { return value_ && !value_->is_null(); }
  // For the fields the schema lets take more than one shape.
  bool is_string() const { return present() && value_->is_string(); }

  // A member of an object (absent when this one is); throws when this is present but not an object.
  Field operator[](std::string_view key) const;
  // The elements of an array (none when absent); throws when present but not an array.
  std::vector<Field> items() const;
  // The members of an object, in key order (nlohmann::json keeps objects sorted); none when absent.
  std::vector<std::pair<std::string, Field>> members() const;

  // Absent, null or non-finite -> nullopt; a value of another type throws "PATH: expected a number".
  std::optional<double> number() const;
  std::optional<int64_t> integer() const;  // a number with a whole value
  std::optional<std::string> string() const;
  std::optional<bool> boolean() const;

  // The same, for the fields a row cannot be placed without: absent throws "PATH: missing".
  double need_number() const;
  int64_t need_integer() const;
  std::string need_string() const;

  // Any value as plain text, for fields whose shape the schema leaves open (options,
  // first_difference): strings as they are, numbers formatted, true/false as yes/no, arrays as
  // "[a, b]", objects as "key: value; ...". nullopt when absent. Never throws.
  std::optional<std::string> any_text() const;

  [[noreturn]] void fail(std::string_view what) const;

 private:
  Field(std::string path) : value_(nullptr), path_(std::move(path)) {}
  const nlohmann::json* value_;
  std::string path_;
};

}  // namespace octet::explain
