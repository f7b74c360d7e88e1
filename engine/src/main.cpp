// xlatperf-engine: initialises DPDK once, then answers requests of the JSON-lines protocol
// on stdin/stdout (docs/protocol.md) until shutdown, end of input or a signal. Parsing and
// replies: protocol.cpp; carrying requests out: engine.cpp.
#include <poll.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
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
  unsigned long queues = 1;
  unsigned long max_frame = xlp::kDefaultMaxFrame;
  for (size_t i = 0; i < own_args.size(); ++i) {
    if (own_args[i] == "--force") force = true;
    else if (own_args[i] == "--max-frame-size" && i + 1 < own_args.size()) {
      char* end = nullptr;
      max_frame = std::strtoul(own_args[++i].c_str(), &end, 10);
      const unsigned long most = xlp::kMaxFrameSize + xlp::kMaxVlanTags * xlp::kVlanTag;
      if (*end != '\0' || max_frame < 64 || max_frame > most) {
        std::fprintf(stderr, "xlatperf-engine: --max-frame-size %s: must be an integer from 64 to %lu\n",
                     own_args[i].c_str(), most);
        return 2;
      }
    }
    else if (own_args[i] == "--ring-pair" && i + 1 < own_args.size()) ring_pair = own_args[++i];
    else if (own_args[i] == "--queues" && i + 1 < own_args.size()) {
      char* end = nullptr;
      queues = std::strtoul(own_args[++i].c_str(), &end, 10);
      if (*end != '\0' || queues < 1 || queues > xlp::kMaxQueues) {
        std::fprintf(stderr, "xlatperf-engine: --queues %s: must be an integer from 1 to %u\n", own_args[i].c_str(),
                     unsigned(xlp::kMaxQueues));
        return 2;
      }
    } else {
      std::fprintf(stderr, "xlatperf-engine: unknown option %s\n", own_args[i].c_str());
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
    if (!ring_pair.empty()) xlp::create_ring_pair(ring_pair, uint16_t(queues));
    engine = std::make_unique<xlp::Engine>(g_signal, uint16_t(queues), uint32_t(max_frame));
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
