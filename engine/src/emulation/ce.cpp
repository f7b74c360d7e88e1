#include "emulation/ce.hpp"

#include <fstream>
#include <unordered_map>

#include "core/frame.hpp"

namespace xlp {

// The rules of xlatperf/frames/addressing.py (BindingTable.read), which validates a table before
// the engine is given it: one set of rules, so that a table the front end accepts is never
// refused here. engine/tests/binding_tables.txt holds the files both must accept or refuse.
namespace {
constexpr const char* kColumns[] = {"b4_ipv6", "ipv4", "psid", "psid_length", "psid_offset"};
constexpr const char* kHeader = "b4_ipv6,ipv4,psid,psid_length,psid_offset";

// Spaces and tabs around a line or a cell are no part of it (a CR too: CR LF line ends).
std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// The comma-separated cells of a line, trimmed; an empty last cell counts ("a,b," has 3).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    cells.push_back(trimmed(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return cells;
    start = comma + 1;
  }
}

struct Ipv6Hash {
  size_t operator()(Ipv6Bits a) const { return std::hash<uint64_t>()(uint64_t(a >> 64) * 0x9e3779b97f4a7c15ull ^ uint64_t(a)); }
};

// A decimal number of ASCII digits (no sign, no spaces inside) in 0..max (max < 2^32).
uint64_t number_at(const std::string& cell, uint64_t max, const std::string& where, const char* column) {
  uint64_t v = 0;
  bool ok = !cell.empty();
  for (char c : cell) ok = ok && c >= '0' && c <= '9' && (v = v * 10 + uint64_t(c - '0')) <= max;
  if (!ok)
    throw std::invalid_argument(where + ": " + column + " = '" + cell + "': must be an integer in 0.." +
                                std::to_string(max));
  return v;
}
}  // namespace

SoftwireTable read_softwires(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot be read");
  SoftwireTable table;
  std::string line;
  std::optional<std::pair<std::pair<unsigned, unsigned>, size_t>> ratio;  // the first softwire's (k, a), its line
  std::unordered_map<Ipv6Bits, size_t, Ipv6Hash> b4s;  // -> its line
  std::unordered_map<uint64_t, size_t> port_sets;  // ipv4 << 16 | psid -> its line
  bool header = false;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    const std::vector<std::string> cells = cells_of(line);
    if (number == 1) {
      if (cells.size() != std::size(kColumns) || !std::equal(cells.begin(), cells.end(), std::begin(kColumns)))
        throw std::invalid_argument(where + ": the header line must be " + kHeader);
      header = true;
      continue;
    }
    const std::string text = trimmed(line);
    if (text.empty() || text[0] == '#') continue;
    if (cells.size() != std::size(kColumns))
      throw std::invalid_argument(where + ": " + std::to_string(cells.size()) + " columns; must be 5 (" + kHeader +
                                  ")");
    CeFields f;
    try {
      f.ipv6 = ipv6_bits(parse_ip(cells[0], 6));
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(where + ": b4_ipv6 = '" + cells[0] + "': must be an IPv6 address");
    }
    try {
      const auto v4 = parse_ip(cells[1], 4);
      f.ipv4 = uint32_t(v4[0]) << 24 | uint32_t(v4[1]) << 16 | uint32_t(v4[2]) << 8 | v4[3];
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(where + ": ipv4 = '" + cells[1] + "': must be an IPv4 address");
    }
    const unsigned k = unsigned(number_at(cells[3], 16, where, "psid_length"));
    // RFC 7596 §5.1: an lwB4's PSID offset SHOULD be 0 (one contiguous port set): empty says so.
    const unsigned a = cells[4].empty() ? 0 : unsigned(number_at(cells[4], 16, where, "psid_offset"));
    if (a + k > 16)
      throw std::invalid_argument(where + ": psid_offset + psid_length = " + std::to_string(a + k) +
                                  ": must be at most 16");
    f.psid = uint16_t(number_at(cells[2], (uint64_t(1) << k) - 1, where, "psid"));
    if (!ratio) {
      ratio = {{k, a}, number};
      table.ports = PortSet(a, k);
    } else if (ratio->first != std::make_pair(k, a)) {
      throw std::invalid_argument(where + ": psid_length " + std::to_string(k) + ", psid_offset " + std::to_string(a) +
                                  "; line " + std::to_string(ratio->second) + " has " +
                                  std::to_string(ratio->first.first) + ", " + std::to_string(ratio->first.second) +
                                  ": a table has one sharing ratio (the tester emulates lwB4s of one)");
    }
    if (const auto [at, added] = b4s.emplace(f.ipv6, number); !added)
      throw std::invalid_argument(where + ": the lwB4 address of line " + std::to_string(at->second) + " again");
    if (const auto [at, added] = port_sets.emplace(uint64_t(f.ipv4) << 16 | f.psid, number); !added)
      throw std::invalid_argument(where + ": the port set of line " + std::to_string(at->second) + " again");
    table.softwires.push_back(f);
  }
  if (!header) throw std::invalid_argument(path + ":1: the header line must be " + kHeader);
  if (table.softwires.empty()) throw std::invalid_argument(path + ": no softwire (a line after the header)");
  return table;
}

}  // namespace xlp
