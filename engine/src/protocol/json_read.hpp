// Reading a request's JSON: the key checks and readers every parser of the protocol uses
// (protocol/ only, not included from outside it). Each throws BadParameter naming the key path,
// the value and what is allowed.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/frame.hpp"

namespace xlp::protocol::detail {

using nlohmann::json;

// The one shape of a parameter error: `key = value: what is allowed`.
[[noreturn]] void bad(const std::string& key, const json& value, const std::string& allowed);

// Rejects keys the protocol does not know, so that a misspelt key fails loudly instead of
// silently leaving its default: `obj` (at `path`, "" or ending in '.') must be an object
// with no key but `keys`.
void known_keys(const json& obj, const std::string& path, std::initializer_list<const char*> keys);

const json& require(const json& obj, const std::string& path, const char* key);

double number_in(const json& obj, const std::string& path, const char* key, double lo, double hi,
                 std::optional<double> dflt = std::nullopt);

uint64_t integer_in(const json& obj, const std::string& path, const char* key, uint64_t lo,
                    uint64_t hi, std::optional<uint64_t> dflt = std::nullopt);

// A true/false key; `dflt` when it is absent.
bool flag(const json& obj, const std::string& path, const char* key, bool dflt);

std::string text(const json& obj, const std::string& path, const char* key);

template <class Parse>
auto parsed(const json& obj, const std::string& path, const char* key, Parse parse) {
  std::string s = text(obj, path, key);
  try {
    return parse(s);
  } catch (const std::invalid_argument& e) {  // parse_ip / parse_mac: what is wrong with s
    bad(path + key, s, e.what());
  }
}

// "2001:db8::/40" -> address and prefix length.
template <class Address>
std::pair<Address, unsigned> parse_prefix(const json& obj, const std::string& path, const char* key, int version) {
  return parsed(obj, path, key, [&](const std::string& t) {
    const size_t slash = t.find('/');
    const unsigned max = version == 4 ? 32 : 128;
    if (slash == std::string::npos) throw std::invalid_argument("must be a prefix, address/length");
    const std::string length = t.substr(slash + 1);
    if (length.empty() || length.size() > 3 || length.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(length) > max)
      throw std::invalid_argument("the prefix length must be in 0.." + std::to_string(max));
    const auto a = parse_ip(t.substr(0, slash), version);
    if constexpr (std::is_same_v<Address, uint32_t>)
      return std::make_pair(uint32_t(a[0]) << 24 | uint32_t(a[1]) << 16 | uint32_t(a[2]) << 8 | a[3],
                            unsigned(std::stoul(length)));
    else
      return std::make_pair(a, unsigned(std::stoul(length)));
  });
}

// A list of prefixes, ["2001:db8::/40", ...] (none when the key is absent), each with no bits set
// after its length.
template <class Address>
std::vector<std::pair<Address, int>> prefix_list(const json& obj, const std::string& path, const char* key,
                                                 int version) {
  std::vector<std::pair<Address, int>> out;
  if (!obj.contains(key)) return out;
  const json& list = obj.at(key);
  if (!list.is_array() || list.size() > 64)
    bad(path + key, list, std::string("must be a list of at most 64 IPv") + (version == 4 ? "4" : "6") + " prefixes");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = std::string(key) + "[" + std::to_string(i) + "]";
    const auto [address, bits] = parse_prefix<Address>(json{{item, list[i]}}, path, item.c_str(), version);
    if constexpr (std::is_same_v<Address, uint32_t>) {
      if (bits < 32 && (address << bits) != 0) bad(path + item, list[i], "must have no bits set after its length");
    } else {
      for (size_t b = bits; b < 128; ++b)
        if (address[b / 8] & (0x80 >> (b % 8))) bad(path + item, list[i], "must have no bits set after its length");
    }
    out.emplace_back(address, int(bits));
  }
  return out;
}

}  // namespace xlp::protocol::detail
