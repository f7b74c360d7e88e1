// Binding-table files (read_softwires, ce.cpp) against the front end's rules: the cases of
// binding_tables.txt, which tests/test_addressing.py reads with BindingTable.read, must be
// accepted or refused alike.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "emulation/ce.hpp"

using namespace xlp;

namespace {
struct Case {
  std::string name;
  bool accept = false;
  size_t softwires = 0;
  std::string text;  // the file's contents
};

// The case file's escapes: \t a tab, \r a CR, \s a space.
std::string unescaped(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && std::string("trs").find(line[i + 1]) != std::string::npos) {
      out += line[i + 1] == 't' ? '\t' : line[i + 1] == 'r' ? '\r' : ' ';
      ++i;
    } else {
      out += line[i];
    }
  }
  return out;
}

std::vector<Case> cases() {
  std::ifstream in(XLP_BINDING_TABLE_CASES);
  std::vector<Case> found;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("=== ", 0) == 0) {
      std::istringstream words(line.substr(4));
      Case c;
      std::string verdict;
      words >> verdict;
      c.accept = verdict == "accept";
      if (c.accept) words >> c.softwires;
      std::getline(words >> std::ws, c.name);
      found.push_back(c);
    } else if (!found.empty()) {
      found.back().text += unescaped(line) + "\n";
    }
  }
  return found;
}
}  // namespace

TEST(Softwires, TheFrontEndsRulesOneSetOfThem) {
  const std::vector<Case> all = cases();
  ASSERT_GE(all.size(), 30u) << XLP_BINDING_TABLE_CASES;
  const std::string path = "/tmp/xlp-binding-table-" + std::to_string(getpid()) + ".csv";
  for (const Case& c : all) {
    std::ofstream(path, std::ios::binary) << c.text;
    try {
      const SoftwireTable table = read_softwires(path);
      EXPECT_TRUE(c.accept) << c.name << ": accepted";
      EXPECT_EQ(table.softwires.size(), c.softwires) << c.name;
    } catch (const std::invalid_argument& e) {
      EXPECT_FALSE(c.accept) << c.name << ": " << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << c.name << ": names the file: " << e.what();
    }
  }
  std::remove(path.c_str());
}

TEST(Softwires, AnEmptyPsidOffsetIsZeroAndErrorsNameLineAndColumn) {
  const std::string path = "/tmp/xlp-binding-table-" + std::to_string(getpid()) + ".csv";
  std::ofstream(path) << "b4_ipv6,ipv4,psid,psid_length,psid_offset\n2001:db8::1, 192.0.2.1, 3, 2,\n";
  const SoftwireTable table = read_softwires(path);
  EXPECT_EQ(table.ports.psid_offset(), 0u);
  EXPECT_EQ(table.ports.psid_length(), 2u);
  EXPECT_EQ(table.softwires[0].psid, 3);
  EXPECT_EQ(table.softwires[0].ipv4, 0xc0000201u);
  std::ofstream(path) << "b4_ipv6,ipv4,psid,psid_length,psid_offset\n2001:db8::1,192.0.2.1,4,2,0\n";
  try {
    read_softwires(path);
    ADD_FAILURE() << "psid 4 with psid_length 2 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), path + ":2: psid = '4': must be an integer in 0..3");
  }
  std::remove(path.c_str());
}
