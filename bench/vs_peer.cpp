// wiresim's side of bench/vs-simgrid: runs a workload of bench/peer_workloads.h on the
// engine and prints one line, the same as bench/peer-simgrid prints for SimGrid:
//   wiresim ring 1024 transfers 2095104 time_s 6.9e-03 build_s 0.21 run_s 0.35 wall_s 0.56 cpu_s 0.5 peak_rss_MiB 180
//
//   bench_vs_peer ring 1024
//   bench_vs_peer a2a 256
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "bench/bench_util.h"
#include "bench/peer_workloads.h"
#include "sim/executor.h"
#include "sim/transfer_dag.h"

using namespace wiresim;

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: bench_vs_peer ring|a2a N\n");
    return 2;
  }
  const double t0 = bench::now_s(), c0 = bench::cpu_s();
  const peer::Workload w = peer::make(argv[1], std::atoi(argv[2]));
  std::vector<sim::LinkSpec> links;
  for (const auto& l : w.links) links.push_back({sim::BytesPerSec{l.bandwidth}, sim::Seconds{l.latency}, l.name});
  sim::TransferDag dag;
  dag.reserve(w.transfers.size(), w.route_pool.size(), w.deps.size());
  dag.reserve_routes(w.routes());
  std::vector<sim::RouteId> routes(w.routes());
  for (std::size_t r = 0; r < routes.size(); ++r)
    routes[r] = dag.add_route({w.route_pool.data() + w.route_offsets[r], w.route_offsets[r + 1] - w.route_offsets[r]});
  for (const auto& t : w.transfers)
    dag.add_transfer_via(routes[t.route], sim::Bytes{t.bytes}, std::nullopt, sim::BytesPerSec::unlimited(), 0, t.src, t.dst);
  for (const auto& [a, b] : w.deps) dag.add_dependency(a, b);
  dag.freeze();
  const double t1 = bench::now_s();
  const sim::RunResult r = sim::run_dag(links, dag);
  const double t2 = bench::now_s(), c2 = bench::cpu_s();
  fmt::print("wiresim {} {} transfers {} time_s {:.9e} build_s {:.4f} run_s {:.4f} wall_s {:.4f} cpu_s {:.4f} "
             "peak_rss_MiB {:.0f}\n",
             w.name, w.gpus, w.transfers.size(), r.makespan.count(), t1 - t0, t2 - t1, t2 - t0, c2 - c0,
             bench::peak_rss_mib());
}
