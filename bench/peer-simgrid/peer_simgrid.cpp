// bench/peer-simgrid: the workloads of bench/peer_workloads.h on SimGrid (S4U), for the
// side-by-side comparison in bench/vs-simgrid. Same links (bandwidth, latency), same route
// per transfer (a full zone with one explicit route per host pair used), same transfers
// with the same dependencies, played the way SimGrid programs usually are: one actor per
// GPU, sending with put_async to the next rank's mailbox, whose permanent receiver
// (Mailbox::set_receiver) lets each comm start the moment it is posted, as a DAG node does:
//   ring: actor r posts step s once its own send of step s-1 is done and the message of
//         step s-1 from r-1 has arrived: exactly transfer (s, r)'s two predecessors;
//   a2a:  actor i posts all its sends at time 0, then waits for its n-1 messages.
// `dag` plays the same transfers through SimGrid's activity DAG instead (Comm::sendto_init
// + add_successor + vetoable_start): same results, but its cost grows faster than N^4 in
// 3.32 (0.4 s at 64 GPUs, 195 s at 256 for the ring), so it only cross-checks small cases.
//
// Network model: CM02 with unit factors (latency-factor 1, bandwidth-factor 1, weight-S 0),
// no cross-traffic and no TCP window bound (TCP-gamma 0): a transfer pays its route's
// latency, then shares links max-min, weighted by 1/latency (see bench/README.md).
//
//   peer_simgrid ring 1024       # prints: simgrid ring 1024 transfers 2095104 time_s ... wall_s ...
//   peer_simgrid a2a 64 dag      # the same through SimGrid's activity DAG
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <time.h>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "bench/peer_workloads.h"

namespace sg4 = simgrid::s4u;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: peer_simgrid ring|a2a N\n");
    return 2;
  }
  const double t0 = now_s(), c0 = cpu_s();
  const wiresim::peer::Workload w = wiresim::peer::make(argv[1], std::atoi(argv[2]));
  int sg_argc = 1;
  sg4::Engine e(&sg_argc, argv);
  xbt_log_control_set("root.thres:critical");
  e.set_config("network/model:CM02");
  e.set_config("network/latency-factor:1");
  e.set_config("network/bandwidth-factor:1");
  e.set_config("network/weight-S:0");
  e.set_config("network/crosstraffic:0");
  e.set_config("network/TCP-gamma:0");

  auto* zone = sg4::create_full_zone("world");
  std::vector<sg4::Host*> hosts;
  for (int i = 0; i < w.gpus; ++i) hosts.push_back(zone->create_host("gpu" + std::to_string(i), 1e9)->seal());
  std::vector<sg4::Link*> links;
  for (const auto& l : w.links) links.push_back(zone->create_link(l.name, l.bandwidth)->set_latency(l.latency)->seal());
  std::vector<bool> routed(std::size_t(w.gpus) * w.gpus, false);
  for (const auto& t : w.transfers) {
    const std::size_t pair = std::size_t(t.src) * w.gpus + t.dst;
    if (routed[pair]) continue;
    routed[pair] = true;
    std::vector<sg4::LinkInRoute> route;
    for (auto i = w.route_offsets[t.route]; i < w.route_offsets[t.route + 1]; ++i) route.emplace_back(links[w.route_pool[i]]);
    zone->add_route(hosts[t.src]->get_netpoint(), hosts[t.dst]->get_netpoint(), nullptr, nullptr, route, false);
  }
  zone->seal();

  const std::string mode = argc > 3 ? argv[3] : "actors";
  std::vector<sg4::CommPtr> comms;
  std::vector<sg4::Mailbox*> boxes;  // outlives e.run(): the actors capture it
  static int token = 0;
  if (mode == "dag") {
    comms.reserve(w.transfers.size());
    for (const auto& t : w.transfers) {
      sg4::CommPtr c = sg4::Comm::sendto_init(hosts[t.src], hosts[t.dst]);
      c->set_payload_size(static_cast<std::uint64_t>(t.bytes));
      comms.push_back(c);
    }
    for (const auto& [a, b] : w.deps) comms[a]->add_successor(comms[b]);
    for (auto& c : comms) c->vetoable_start();
  } else {
    const int n = w.gpus;
    for (int i = 0; i < n; ++i) boxes.push_back(sg4::Mailbox::by_name("gpu" + std::to_string(i)));
    for (int i = 0; i < n; ++i) {
      sg4::ActorPtr actor;
      if (w.name == "ring") {
        // Transfer (s, r) is w.transfers[s * n + r].
        actor = sg4::Actor::create("rank" + std::to_string(i), hosts[i], [&w, &boxes, i, n] {
          const int steps = static_cast<int>(w.transfers.size()) / n;
          sg4::CommPtr previous;
          for (int s = 0; s < steps; ++s) {
            if (s > 0) {
              previous->wait();
              boxes[i]->get<int>();
            }
            const auto& t = w.transfers[std::size_t(s) * n + i];
            previous = boxes[t.dst]->put_async(&token, static_cast<std::uint64_t>(t.bytes));
          }
          previous->wait();
          boxes[i]->get<int>();
        });
      } else {
        // Rank i's n - 1 transfers are w.transfers[i * (n - 1) ...], all free at time 0.
        actor = sg4::Actor::create("rank" + std::to_string(i), hosts[i], [&w, &boxes, i, n] {
          std::vector<sg4::CommPtr> sends;
          for (int d = 0; d < n - 1; ++d) {
            const auto& t = w.transfers[std::size_t(i) * (n - 1) + d];
            sends.push_back(boxes[t.dst]->put_async(&token, static_cast<std::uint64_t>(t.bytes)));
          }
          for (int d = 0; d < n - 1; ++d) boxes[i]->get<int>();
          sg4::Comm::wait_all(sends);
        });
      }
      boxes[i]->set_receiver(actor);
    }
  }
  const double t1 = now_s();
  e.run();
  const double t2 = now_s(), c2 = cpu_s();
  std::printf("simgrid%s %s %d transfers %zu time_s %.9e build_s %.4f run_s %.4f wall_s %.4f cpu_s %.4f peak_rss_MiB %.0f\n",
              mode == "dag" ? "-dag" : "", w.name.c_str(), w.gpus, w.transfers.size(), sg4::Engine::get_clock(), t1 - t0, t2 - t1, t2 - t0,
              c2 - c0, peak_rss_mib());
  return 0;
}
