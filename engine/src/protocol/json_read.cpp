#include "protocol/json_read.hpp"

#include <algorithm>

namespace xlp::protocol::detail {

[[noreturn]] void bad(const std::string& key, const json& value, const std::string& allowed) {
  throw BadParameter(key, key + " = " + value.dump() + ": " + allowed);
}

void known_keys(const json& obj, const std::string& path, std::initializer_list<const char*> keys) {
  if (!obj.is_object()) bad(path.empty() ? "request" : path.substr(0, path.size() - 1), obj, "must be an object");
  for (const auto& item : obj.items()) {
    if (std::any_of(keys.begin(), keys.end(), [&](const char* k) { return item.key() == k; })) continue;
    std::string list;
    for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
    throw BadParameter(path + item.key(), path + item.key() + ": unknown key (keys: " + list + ")");
  }
}

const json& require(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object() || !obj.contains(key))
    throw BadParameter(path + key, path + key + ": missing");
  return obj.at(key);
}

double number_in(const json& obj, const std::string& path, const char* key, double lo, double hi,
                 std::optional<double> dflt) {
  if (dflt && !obj.contains(key)) return *dflt;
  const json& v = require(obj, path, key);
  if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
    bad(path + key, v, "must be a number in " + json(lo).dump() + ".." + json(hi).dump());
  return v.get<double>();
}

uint64_t integer_in(const json& obj, const std::string& path, const char* key, uint64_t lo,
                    uint64_t hi, std::optional<uint64_t> dflt) {
  if (dflt && !obj.contains(key)) return *dflt;
  const json& v = require(obj, path, key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<uint64_t>() < lo ||
      v.get<uint64_t>() > hi)
    bad(path + key, v, "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  return v.get<uint64_t>();
}

bool flag(const json& obj, const std::string& path, const char* key, bool dflt) {
  if (!obj.contains(key)) return dflt;
  if (!obj[key].is_boolean()) bad(path + key, obj[key], "must be true or false");
  return obj[key].get<bool>();
}

std::string text(const json& obj, const std::string& path, const char* key) {
  const json& v = require(obj, path, key);
  if (!v.is_string()) bad(path + key, v, "must be a string");
  return v.get<std::string>();
}

}  // namespace xlp::protocol::detail
