// wiresim calibrate compare LOG... --topo T.yaml [--overlay fit.yaml]: measured nccl-tests
// busbw beside the simulator's prediction, without and with a calibration overlay.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "calibrate/nccl_tests_log.h"
#include "models/machine.h"
#include "models/run.h"
#include "models/tuner.h"
#include "input/input_error.h"
#include "tools/commands.h"
#include "tools/machine_input.h"

namespace wiresim::tools {
namespace {

struct CompareArgs {
  std::vector<std::string> logs;
  std::string topo;
  std::string overlay;
  std::vector<std::string> settings;
  std::string params;
};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

// Predicted busbw of one size on `machine`, with the tuner's choice.
double predict(const models::Machine& machine, models::Problem problem, sim::Bytes size) {
  problem.size = size;
  const auto decision = models::tune(machine, problem, {});
  return models::run_collective(machine, problem, decision.best, models::Method::simulate).busbw_GBps;
}

int run_compare(const CompareArgs& a) {
  const auto overrides = topo::parse_overrides(a.settings);
  const MachineInput plain = load_machine_input(a.topo, overrides, "", a.params);
  const models::Machine base(plain.graph, plain.params);
  std::unique_ptr<MachineInput> fitted;
  std::unique_ptr<models::Machine> calibrated;
  if (!a.overlay.empty()) {
    fitted = std::make_unique<MachineInput>(load_machine_input(a.topo, overrides, a.overlay, a.params));
    calibrated = std::make_unique<models::Machine>(fitted->graph, fitted->params);
  }
  for (const auto& path : a.logs) {
    const calibrate::NcclTestsLog log = calibrate::read_nccl_tests_log(path);
    if (!log.collective) throw input::InputError(path, 0, 0, "cannot tell which collective the log measured");
    const models::Collective op = *log.collective;
    const int ranks = log.rank_count().value_or(0);
    const int available = static_cast<int>(plain.graph.gpus().size());
    if (ranks < 2 || ranks > available)
      throw input::InputError(path, 0, 0,
                            fmt::format("the log ran {} ranks; {} has {} GPUs (use --set to grow a cluster)", ranks,
                                        a.topo, available));
    models::Problem problem;
    problem.op = op;
    problem.ranks.assign(plain.graph.gpus().begin(), plain.graph.gpus().begin() + ranks);
    fmt::print("# {}: {} on {} ranks, measured vs predicted on {}{}\n", path, models::to_string(op), ranks, a.topo,
               a.overlay.empty() ? "" : fmt::format(" (and with overlay {})", a.overlay));
    fmt::print("{:>14} {:>14} {:>14} {:>9}", "size (B)", "measured", "predicted", "error");
    if (calibrated) fmt::print(" {:>14} {:>9}", "with overlay", "error");
    fmt::print("   (busbw, GB/s)\n");
    std::vector<double> err_plain, err_fit;
    for (const auto& row : log.rows) {
      const double measured = row.out_of_place.busbw_gbps;
      if (measured <= 0.0) continue;
      const double p = predict(base, problem, row.size);
      err_plain.push_back(std::abs(p - measured) / measured * 100.0);
      fmt::print("{:>14.0f} {:>14.2f} {:>14.2f} {:>8.1f}%", row.size.count(), measured, p, err_plain.back());
      if (calibrated) {
        const double q = predict(*calibrated, problem, row.size);
        err_fit.push_back(std::abs(q - measured) / measured * 100.0);
        fmt::print(" {:>14.2f} {:>8.1f}%", q, err_fit.back());
      }
      fmt::print("\n");
    }
    fmt::print("# median absolute busbw error: {:.1f}% without the overlay", median(err_plain));
    if (calibrated) fmt::print(", {:.1f}% with it", median(err_fit));
    fmt::print("\n");
  }
  return 0;
}

}  // namespace

void add_calibrate_compare(CLI::App* calibrate, int* exit_code) {
  auto a = std::make_shared<CompareArgs>();
  auto* cmd = calibrate->add_subcommand("compare", "measured nccl-tests busbw vs predicted, without and with an overlay");
  cmd->add_option("logs", a->logs, "nccl-tests logs")->required();
  cmd->add_option("--topo", a->topo, "topology YAML the logs ran on")->required();
  cmd->add_option("--overlay", a->overlay, "calibration overlay to compare with (from `calibrate fit -o`)");
  cmd->add_option("--set", a->settings, "override a topology parameter, e.g. --set nodes=2");
  cmd->add_option("--params", a->params, "model parameter file replacing the built-in one");
  cmd->callback([a, exit_code] { *exit_code = run_compare(*a); });
}

}  // namespace wiresim::tools
