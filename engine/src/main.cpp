// xlatperf-engine: initialises DPDK once, then executes elementary trials requested over a
// JSON-lines protocol on stdin/stdout (docs/protocol.md).
#include <poll.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_version.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan.hpp"
#include "runtime.hpp"
#include "safety.hpp"

#ifndef XLP_VERSION
#define XLP_VERSION "0.1.0"
#endif

using nlohmann::json;

namespace {

constexpr int kProtocolVersion = 1;
volatile std::sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

// Protocol output goes to the original stdout; fd 1 is pointed at stderr so that nothing
// DPDK prints can corrupt the protocol stream.
FILE* g_out = nullptr;

void send(const json& msg) {
  std::string line = msg.dump(-1, ' ', false, json::error_handler_t::replace);
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

struct Engine {
  rte_mempool* pool = nullptr;
  std::vector<uint16_t> ports;
  std::vector<xlp::PortIdentity> identities;  // per port: MAC and the addresses it answers for
  std::vector<std::unique_ptr<xlp::StateTable>> tables;  // per port: the Responder's state table
  std::vector<unsigned> workers;
  uint64_t tsc_hz = 0;
  uint8_t trial_tag = 0;

  // Two ports wired to each other through a pair of rte_rings, inside this process: what one
  // sends the other receives. A tester self-test without any kernel or NIC in the path.
  void create_ring_pair(const std::string& name) {
    rte_ring* rings[2];
    for (int i = 0; i < 2; ++i) {
      const std::string ring_name = name + "_r" + std::to_string(i);
      rings[i] = rte_ring_create(ring_name.c_str(), 4096, int(rte_socket_id()), RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (!rings[i]) throw std::runtime_error("ring pair " + name + ": cannot create ring: " + rte_strerror(rte_errno));
    }
    for (int i = 0; i < 2; ++i) {
      const std::string port_name = name + std::to_string(i);  // the PMD prepends "net_ring_"
      if (rte_eth_from_rings(port_name.c_str(), &rings[i], 1, &rings[1 - i], 1, rte_socket_id()) < 0)
        throw std::runtime_error("ring pair " + name + ": cannot create port: " + rte_strerror(rte_errno));
    }
  }

  void setup_ports() {
    const unsigned nb_ports = rte_eth_dev_count_avail();
    if (nb_ports == 0) throw std::runtime_error("no DPDK ports (check the port specs)");
    // Enough mbufs for every descriptor ring plus the per-lcore caches and bursts in flight.
    pool = rte_pktmbuf_pool_create("xlp_pool", 32767, 512, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                   int(rte_socket_id()));
    if (!pool) throw std::runtime_error(std::string("cannot create mbuf pool: ") + rte_strerror(rte_errno));
    uint16_t port;
    RTE_ETH_FOREACH_DEV(port) {
      rte_eth_conf conf{};
      char name[RTE_ETH_NAME_MAX_LEN] = "";
      rte_eth_dev_get_name_by_port(port, name);
      auto fail = [&](const char* what, int rc) {
        throw std::runtime_error(std::string("port ") + name + ": " + what + ": " + rte_strerror(-rc));
      };
      int rc = rte_eth_dev_configure(port, 1, 1, &conf);
      if (rc < 0) fail("configure", rc);
      uint16_t rxd = 1024, txd = 1024;
      rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
      const int socket = rte_eth_dev_socket_id(port);
      if ((rc = rte_eth_rx_queue_setup(port, 0, rxd, socket < 0 ? 0 : socket, nullptr, pool)) < 0)
        fail("rx queue", rc);
      if ((rc = rte_eth_tx_queue_setup(port, 0, txd, socket < 0 ? 0 : socket, nullptr)) < 0)
        fail("tx queue", rc);
      if ((rc = rte_eth_dev_start(port)) < 0) fail("start", rc);
      rte_eth_promiscuous_enable(port);  // not all drivers support it; frames to us are enough
      ports.push_back(port);
      xlp::PortIdentity id;
      rte_ether_addr mac{};
      rte_eth_macaddr_get(port, &mac);
      std::memcpy(id.mac.data(), mac.addr_bytes, 6);
      identities.push_back(id);
      tables.emplace_back();
    }
    unsigned lcore;
    RTE_LCORE_FOREACH_WORKER(lcore) workers.push_back(lcore);
    tsc_hz = rte_get_tsc_hz();
  }

  void close_ports() {
    for (uint16_t p : ports) {
      rte_eth_dev_stop(p);
      rte_eth_dev_close(p);
    }
    ports.clear();
  }

  json hello() const {
    json port_list = json::array();
    for (uint16_t p : ports) {
      rte_eth_dev_info info{};
      rte_eth_dev_info_get(p, &info);
      rte_ether_addr mac{};
      rte_eth_macaddr_get(p, &mac);
      rte_eth_link link{};
      rte_eth_link_get_nowait(p, &link);
      char name[RTE_ETH_NAME_MAX_LEN] = "";
      rte_eth_dev_get_name_by_port(p, name);
      port_list.push_back({{"index", p}, {"name", name}, {"driver", info.driver_name},
                           {"mac", xlp::format_mac(mac.addr_bytes)},
                           {"link_speed_mbps", link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed},
                           {"link_up", link.link_status == RTE_ETH_LINK_UP},
                           {"rx_queues", info.max_rx_queues}, {"tx_queues", info.max_tx_queues},
                           {"hw_timestamp", (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0}});
    }
    bool hw = false;
    for (auto& p : port_list) hw = hw || p["hw_timestamp"].get<bool>();
    return {{"ok", true}, {"protocol", kProtocolVersion}, {"engine", XLP_VERSION}, {"dpdk", rte_version()},
            {"tsc_hz", tsc_hz},
            {"lcores", {{"main", rte_get_main_lcore()}, {"workers", workers}}},
            {"timestamps", {{"software", "tsc"}, {"resolution_ns", 1e9 / double(tsc_hz)}, {"hardware", hw}}},
            {"ports", port_list}};
  }

  // Between trials: answers ARP/ND on every port and discards everything else, so the DUT
  // keeps its neighbour entries and no stale frame waits in a queue. `inspect` sees each frame.
  void service_ports(const std::function<void(uint16_t, const rte_mbuf*)>& inspect = nullptr) {
    rte_mbuf* bufs[32];
    for (uint16_t p : ports)
      for (int i = 0; i < 100000; ++i) {
        uint16_t n = rte_eth_rx_burst(p, 0, bufs, 32);
        if (n == 0) break;
        for (uint16_t k = 0; k < n; ++k) {
          if (inspect) inspect(p, bufs[k]);
          xlp::answer_neighbor(p, bufs[k], identities[p], pool);
        }
        rte_pktmbuf_free_bulk(bufs, n);
      }
  }

  uint16_t port_arg(const json& req, const std::string& key) const {
    if (!req.contains(key) || !req[key].is_number_unsigned() || req[key].get<uint64_t>() >= ports.size())
      throw std::invalid_argument(key + " = " + (req.contains(key) ? req[key].dump() : "(missing)") +
                                  ": must be a port index in 0.." + std::to_string(ports.size() - 1));
    return req[key].get<uint16_t>();
  }

  // {"op":"addresses","ports":[{"port":0,"ranges":[{"ip_version":4,"address":"198.18.0.2",
  //   "offset":2,"min":2,"max":65534}]}]}: the addresses each port answers ARP/ND for.
  json addresses(const json& req) {
    if (!req.contains("ports") || !req["ports"].is_array())
      throw std::invalid_argument("ports: missing (a list of {port, ranges})");
    std::vector<std::pair<uint16_t, xlp::AddressSet>> sets;
    for (const json& p : req["ports"]) {
      const uint16_t port = port_arg(p, "port");
      xlp::AddressSet set;
      for (const json& r : p.value("ranges", json::array())) {
        xlp::AddressRange range;
        range.ip_version = r.value("ip_version", 0);
        if (range.ip_version != 4 && range.ip_version != 6)
          throw std::invalid_argument("ranges[].ip_version = " + r.value("ip_version", json()).dump() + ": must be 4 or 6");
        range.base = xlp::parse_ip(r.value("address", ""), range.ip_version);
        const uint32_t len = range.ip_version == 4 ? 4 : 16;
        range.offset = r.value("offset", len - 2);
        if (range.offset % 2 || range.offset > len - 2)
          throw std::invalid_argument("ranges[].offset = " + std::to_string(range.offset) +
                                      ": must be even and in 0.." + std::to_string(len - 2));
        const uint32_t word = uint32_t(range.base[range.offset] << 8 | range.base[range.offset + 1]);
        range.min = r.value("min", word);
        range.max = r.value("max", word);
        if (range.min > range.max || range.max > 65535)
          throw std::invalid_argument("ranges[]: min = " + std::to_string(range.min) + ", max = " +
                                      std::to_string(range.max) + ": need min <= max <= 65535");
        set.add(range);
      }
      sets.emplace_back(port, std::move(set));
    }
    for (auto& [port, set] : sets) identities[port].owned = std::move(set);
    return {{"ok", true}};
  }

  // {"op":"resolve","port":0,"ip_version":4,"own_ip":"198.18.0.2","target":"198.18.0.1",
  //  "timeout":3}: asks for the MAC address of `target` (ARP / Neighbor Solicitation).
  json resolve(const json& req) {
    const uint16_t port = port_arg(req, "port");
    const int version = req.value("ip_version", 0);
    if (version != 4 && version != 6)
      throw std::invalid_argument("ip_version = " + req.value("ip_version", json()).dump() + ": must be 4 or 6");
    const auto own_ip = xlp::parse_ip(req.value("own_ip", ""), version);
    const auto target = xlp::parse_ip(req.value("target", ""), version);
    const double timeout = req.value("timeout", 3.0);
    std::optional<std::array<uint8_t, 6>> mac;
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    double next_request = 0;
    while (!mac && elapsed() < timeout && !g_signal) {
      if (elapsed() >= next_request) {
        next_request += 0.5;
        uint8_t frame[xlp::kNeighborFrameMax];
        const size_t len = xlp::build_neighbor_request(version, identities[port].mac.data(), own_ip.data(),
                                                       target.data(), frame);
        if (rte_mbuf* m = rte_pktmbuf_alloc(pool)) {
          std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame, len);
          m->data_len = uint16_t(len);
          m->pkt_len = uint32_t(len);
          if (rte_eth_tx_burst(port, 0, &m, 1) != 1) rte_pktmbuf_free(m);
        }
      }
      service_ports([&](uint16_t p, const rte_mbuf* m) {
        if (p == port && !mac)
          mac = xlp::parse_neighbor_reply(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, version, target.data());
      });
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
    if (!mac)
      throw std::runtime_error("no reply from " + req.value("target", std::string()) + " on port " +
                               std::to_string(port) + " within " + json(timeout).dump() + " s");
    return {{"ok", true}, {"mac", xlp::format_mac(mac->data())}};
  }

  json trial(const json& req) {
    xlp::TrialPlan plan = xlp::parse_trial(req, uint16_t(ports.size()));
    trial_tag = uint8_t(trial_tag % 255 + 1);  // 1..255, never 0
    service_ports();
    xlp::Trial trial(plan, trial_tag, pool, tsc_hz, identities, tables);
    const auto t0 = std::chrono::steady_clock::now();
    auto last_progress = t0;
    const auto interval = std::chrono::duration<double>(plan.progress_interval);
    const json id = req["id"];
    trial.run(workers, [&] {
      if (g_signal) trial.request_abort();
      const auto now = std::chrono::steady_clock::now();
      if (plan.progress_interval > 0 && now - last_progress >= interval) {
        last_progress = now;
        send({{"id", id}, {"event", "progress"},
              {"elapsed", std::chrono::duration<double>(now - t0).count()}, {"flows", trial.progress()}});
      }
    });
    json out = trial.result(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    out["ok"] = true;
    return out;
  }
};

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
  for (size_t i = 0; i < own_args.size(); ++i) {
    if (own_args[i] == "--force") force = true;
    else if (own_args[i] == "--ring-pair" && i + 1 < own_args.size()) ring_pair = own_args[++i];
    else { std::fprintf(stderr, "xlatperf-engine: unknown option %s\n", own_args[i].c_str()); return 2; }
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

  Engine engine;
  int status = 0;
  try {
    if (!ring_pair.empty()) engine.create_ring_pair(ring_pair);
    engine.setup_ports();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xlatperf-engine: %s\n", e.what());
    engine.close_ports();
    rte_eal_cleanup();
    return 2;
  }

  std::string line;
  while (read_line(line, [&] { engine.service_ports(); })) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json req, reply;
    try {
      req = json::parse(line);
    } catch (const std::exception& e) {
      send({{"id", nullptr}, {"ok", false}, {"error", std::string("bad JSON: ") + e.what()}});
      continue;
    }
    const json id = req.is_object() && req.contains("id") ? req["id"] : json();
    const std::string op = req.is_object() && req.contains("op") && req["op"].is_string() ? req["op"].get<std::string>() : "";
    try {
      if (op == "hello") reply = engine.hello();
      else if (op == "trial") reply = engine.trial(req);
      else if (op == "addresses") reply = engine.addresses(req);
      else if (op == "resolve") reply = engine.resolve(req);
      else if (op == "shutdown") reply = {{"ok", true}};
      else throw std::invalid_argument("op = \"" + op + "\": must be one of hello, trial, addresses, resolve, shutdown");
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"error", e.what()}};
    }
    reply["id"] = id;
    send(reply);
    if (op == "shutdown" || g_signal) break;
  }
  engine.close_ports();
  rte_eal_cleanup();
  return status;
}
