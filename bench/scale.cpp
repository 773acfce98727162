// Benchmark: collectives on a rail-optimised HGX H100 cluster (topologies/cluster-h100-ib.yaml),
// through the whole stack (topology, models, engine), at up to 2,048 nodes (16,384 GPUs).
// Prints, per phase, wall and CPU seconds, the DAG's size, the simulated time and the
// process's peak RSS, as one `key value` line that bench/scale-sweep and docs/scale.md use.
//
//   bench_scale all_reduce hierarchical 2048            # 16,384 GPUs, 1 GiB, aggregation 1
//   bench_scale all_reduce ring 2048 1GiB 512           # ring steps merged 512 to a transfer
//   bench_scale all_to_all pairwise 128 1GiB 8 topologies/cluster-h100-ib.yaml
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "bench/bench_util.h"
#include "models/machine.h"
#include "models/fidelity.h"
#include "models/plan.h"
#include "sim/executor.h"
#include "input/input_error.h"
#include "topologies/builder.h"

using namespace wiresim;

int main(int argc, char** argv) {
  if (argc < 4) {
    fmt::print(stderr, "usage: bench_scale OP ALGO NODES [SIZE=1GiB] [AGGREGATION=1] [TOPOLOGY] [PROTO=simple]\n");
    return 2;
  }
  try {
    const auto op = models::parse_collective(argv[1]);
    const auto algorithm = models::parse_algorithm(argv[2]);
    const std::string nodes = argv[3];
    const sim::Bytes size = sim::parse_size(argc > 4 ? argv[4] : "1GiB");
    const int aggregation = argc > 5 ? std::atoi(argv[5]) : 1;
    const std::string topology = argc > 6 ? argv[6] : "topologies/cluster-h100-ib.yaml";
    const auto protocol = models::parse_protocol(argc > 7 ? argv[7] : "simple");
    if (!op || !algorithm || !protocol) throw input::InputError("unknown collective, algorithm or protocol");

    double t0 = bench::now_s(), c0 = bench::cpu_s();
    const topo::LinkGraph graph = topo::load_topology(topology, {{"nodes", nodes}});
    const models::Params params = models::default_params();
    const models::Machine machine(graph, params);
    models::Problem problem;
    problem.op = *op;
    problem.size = size;
    problem.ranks = graph.gpus();
    // models/limits.h over-estimates hierarchical plans (as a ring over every GPU); this bench
    // measures the real size, so it lifts the guard.
    problem.limits.max_memory = sim::Bytes{1e15};
    problem.limits.max_events = 1e15;
    const double topo_s = bench::now_s() - t0, topo_cpu = bench::cpu_s() - c0;

    t0 = bench::now_s(), c0 = bench::cpu_s();
    // The tuner is skipped: its closed form for all_to_all routes all n^2 pairs.
    const models::Choice choice{*algorithm, *protocol, machine.arch().channels, aggregation};
    const models::Plan plan = models::expand(machine, problem, choice);
    plan.dag.freeze();
    const double expand_s = bench::now_s() - t0, expand_cpu = bench::cpu_s() - c0;
    std::size_t transfers = 0;
    for (sim::NodeId i = 0; i < plan.dag.size(); ++i) transfers += plan.dag.node(i).kind == sim::NodeKind::transfer;

    t0 = bench::now_s(), c0 = bench::cpu_s();
    // WINDOW (argv[8]): sim::RunOptions::window_flows, with models::kAutoWindowSlack.
    sim::RunOptions options;
    options.window_flows = argc > 8 ? static_cast<std::size_t>(std::atof(argv[8])) : 0;
    options.window_slack = options.window_flows > 0 ? models::kAutoWindowSlack : 0.0;
    const sim::RunResult run = sim::run_dag(machine.links(), plan.dag, options);
    const double run_s = bench::now_s() - t0, run_cpu = bench::cpu_s() - c0;

    fmt::print("# {} {} on {} x {} nodes ({} GPUs), {}, {} channels, aggregation {}: {}\n", argv[1], argv[2],
               topology, nodes, problem.ranks.size(), models::to_string(choice.protocol), choice.channels,
               aggregation, plan.shape);
    fmt::print("gpus {} aggregation {} transfers {} dag_nodes {} events {} time_us {:.3f} "
               "topo_s {:.3f} expand_s {:.3f} run_s {:.3f} total_s {:.3f} total_cpu_s {:.3f} peak_rss_MiB {:.0f}\n",
               problem.ranks.size(), aggregation, transfers, plan.dag.size(), run.events, run.makespan.us(), topo_s,
               expand_s, run_s, topo_s + expand_s + run_s, topo_cpu + expand_cpu + run_cpu, bench::peak_rss_mib());
    fmt::print("components_solved {} flows_resolved {} peak_concurrent {} local_reshares {}\n", run.components_solved,
               run.flows_resolved, run.peak_concurrent_transfers, run.local_reshares);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_scale: {}\n", e.what());
    return 2;
  }
}
