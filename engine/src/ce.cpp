#include "ce.hpp"

#include <fstream>
#include <sstream>

#include "frame.hpp"

namespace xlp {

namespace {
uint64_t number_at(const std::string& cell, uint64_t max, const std::string& where, const char* column) {
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != cell.size() || v > max)
    throw std::invalid_argument(where + ", column " + column + " = \"" + cell + "\": must be an integer in 0.." +
                                std::to_string(max));
  return v;
}
}  // namespace

SoftwireTable read_softwires(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot be read");
  SoftwireTable table;
  std::string line;
  std::optional<std::pair<unsigned, unsigned>> ratio;  // PSID length and offset of the first softwire
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("b4_ipv6", 0) == 0) continue;  // the header
    const std::string where = path + ":" + std::to_string(number);
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (cells.size() != 5)
      throw std::invalid_argument(where + ": " + std::to_string(cells.size()) +
                                  " columns; a softwire has 5 (b4_ipv6,ipv4,psid,psid_length,psid_offset)");
    CeFields f;
    try {
      f.ipv6 = ipv6_bits(parse_ip(cells[0], 6));
      const auto v4 = parse_ip(cells[1], 4);
      f.ipv4 = uint32_t(v4[0]) << 24 | uint32_t(v4[1]) << 16 | uint32_t(v4[2]) << 8 | v4[3];
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
    const unsigned k = unsigned(number_at(cells[3], 16, where, "psid_length"));
    const unsigned a = unsigned(number_at(cells[4], 16, where, "psid_offset"));
    f.psid = uint16_t(number_at(cells[2], k ? (1u << k) - 1 : 0, where, "psid"));
    if (!ratio) {
      ratio = {k, a};
      table.ports = PortSet(a, k);
    } else if (*ratio != std::make_pair(k, a)) {
      throw std::invalid_argument(where + ": PSID length " + std::to_string(k) + " and offset " + std::to_string(a) +
                                  " differ from the first softwire's (" + std::to_string(ratio->first) + ", " +
                                  std::to_string(ratio->second) + "): the engine takes one sharing ratio per table");
    }
    table.softwires.push_back(f);
  }
  if (table.softwires.empty()) throw std::invalid_argument(path + ": no softwire");
  return table;
}

}  // namespace xlp
