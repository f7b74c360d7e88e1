// xlatperf-engine: initialises DPDK once, then answers requests of the JSON-lines protocol
// on stdin/stdout (docs/protocol.md) until shutdown, end of input or a signal. Parsing and
// replies: protocol/ (protocol.cpp dispatches); carrying requests out: engine.cpp.
#include <poll.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine.hpp"
#include "core/frame.hpp"
#include "protocol/protocol.hpp"
#include "ports/safety.hpp"

namespace {

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

// Protocol output goes to the original stdout; fd 1 is pointed at stderr so that nothing
// DPDK prints can corrupt the protocol stream.
FILE* g_out = nullptr;

void write_message(const nlohmann::json& msg) {
  std::string line = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fputs(line.c_str(), g_out);
  std::fputc('\n', g_out);
  std::fflush(g_out);
}

// Reads one line from stdin, calling `idle` about every 20 ms while waiting; returns false
// at end of input or on a signal.
bool read_line(std::string& line, const std::function<void()>& idle) {
  static std::string buffer;
  for (;;) {
    size_t nl = buffer.find('\n');
    if (nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    if (g_signal) return false;
    pollfd p{0, POLLIN, 0};
    int r = ::poll(&p, 1, 20);
    if (r <= 0) {
      idle();
      continue;
    }
    char chunk[4096];
    ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer.append(chunk, size_t(n));
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Split "EAL args -- engine args".
  std::vector<std::string> eal_args, own_args;
  bool own = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!own && a == "--") { own = true; continue; }
    (own ? own_args : eal_args).push_back(a);
  }
  bool force = false;
  std::string ring_pair;
  xlp::PortOptions ports;
  // "--NAME VALUE" with an unsigned integer VALUE in [low, high]; false after printing why not.
  const auto integer_option = [&](size_t& i, unsigned long low, unsigned long high, unsigned long& out) {
    char* end = nullptr;
    const std::string& text = own_args[++i];
    out = std::strtoul(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || out < low || out > high) {
      std::fprintf(stderr, "xlatperf-engine: %s %s: must be an integer from %lu to %lu\n", own_args[i - 1].c_str(),
                   text.c_str(), low, high);
      return false;
    }
    return true;
  };
  for (size_t i = 0; i < own_args.size(); ++i) {
    const std::string& option = own_args[i];
    const bool has_value = i + 1 < own_args.size();
    unsigned long value = 0;
    if (option == "--force") {
      force = true;
    } else if (option == "--max-frame-size" && has_value) {
      if (!integer_option(i, 64, xlp::kMaxFrameSize + xlp::kMaxVlanTags * xlp::kVlanTag, value)) return 2;
      ports.max_frame = uint32_t(value);
    } else if (option == "--queues" && has_value) {
      if (!integer_option(i, 1, xlp::kMaxQueues, value)) return 2;
      ports.queues = uint16_t(value);
    } else if (option == "--rx-descriptors" && has_value) {
      if (!integer_option(i, 1, 65535, value)) return 2;
      ports.rx_descriptors = uint16_t(value);
    } else if (option == "--tx-descriptors" && has_value) {
      if (!integer_option(i, 1, 65535, value)) return 2;
      ports.tx_descriptors = uint16_t(value);
    } else if (option == "--link-timeout" && has_value) {
      char* end = nullptr;
      ports.link_timeout = std::strtod(own_args[++i].c_str(), &end);
      if (own_args[i].empty() || *end != '\0' || !(ports.link_timeout >= 0 && ports.link_timeout <= 600)) {
        std::fprintf(stderr, "xlatperf-engine: --link-timeout %s: must be a number of seconds from 0 to 600\n",
                     own_args[i].c_str());
        return 2;
      }
    } else if (option == "--flow-control" && has_value) {
      const std::string& mode = own_args[++i];
      if (mode != "off" && mode != "keep") {
        std::fprintf(stderr, "xlatperf-engine: --flow-control %s: must be off or keep\n", mode.c_str());
        return 2;
      }
      ports.flow_control_off = mode == "off";
    } else if (option == "--ports" && has_value) {
      // The ports' device names in protocol order, comma-separated.
      std::string names = own_args[++i];
      for (size_t at = 0; at <= names.size();) {
        const size_t comma = std::min(names.find(',', at), names.size());
        ports.names.push_back(names.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (option == "--ring-pair" && has_value) {
      ring_pair = own_args[++i];
    } else {
      std::fprintf(stderr, "xlatperf-engine: unknown option %s\n", option.c_str());
      return 2;
    }
  }
  for (const auto& ifname : xlp::kernel_interfaces_in_eal_args(eal_args)) {
    std::string why = xlp::interface_in_use(ifname);
    if (!why.empty() && (!force || why.rfind("no interface", 0) == 0)) {
      std::fprintf(stderr, "xlatperf-engine: refusing port on %s%s\n", why.c_str(),
                   force ? "" : " (a tester port must not carry IP traffic; use force to override)");
      return 2;
    }
  }

  int proto_fd = dup(1);
  dup2(2, 1);
  g_out = fdopen(proto_fd, "w");

  std::vector<char*> eal_argv{argv[0]};
  for (auto& a : eal_args) eal_argv.push_back(a.data());
  if (rte_eal_init(int(eal_argv.size()), eal_argv.data()) < 0) {
    std::fprintf(stderr, "xlatperf-engine: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<xlp::Engine> engine;
  try {
    if (!ring_pair.empty()) xlp::create_ring_pair(ring_pair, ports.queues);
    engine = std::make_unique<xlp::Engine>(g_signal, ports);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xlatperf-engine: %s\n", e.what());
    rte_eal_cleanup();
    return 2;
  }

  std::string line;
  while (read_line(line, [&] { engine->idle(); })) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const xlp::protocol::Answer answer = xlp::protocol::answer(line, *engine, write_message);
    write_message(answer.reply);
    if (answer.shutdown || g_signal) break;
  }
  engine.reset();  // stops and closes the ports
  rte_eal_cleanup();
  return 0;
}
