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
#include "models/predict.h"
#include "input/input_error.h"
#include "tools/commands.h"
#include "tools/machine_input.h"

namespace wiresim::tools {
namespace {

struct CompareArgs : MachineOptions {
  std::vector<std::string> logs;
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
  models::PredictOptions exact;
  exact.aggregation = 1;
  return models::predict(machine, problem, exact).outcome.busbw_GBps;
}

int run_compare(const CompareArgs& a) {
  const auto overrides = topo::parse_overrides(a.settings);
  MachineOptions without = a;
  without.overlay.clear();
  const MachineInput plain = load_machine_input(without, a.topo, overrides);
  const models::Machine base = plain.machine();
  std::unique_ptr<MachineInput> fitted;
  std::unique_ptr<models::Machine> calibrated;
  if (!a.overlay.empty()) {
    fitted = std::make_unique<MachineInput>(load_machine_input(a, a.topo, overrides));
    calibrated = std::make_unique<models::Machine>(fitted->machine());
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
    problem.limits = plain.limits;
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
  add_machine_options(cmd, *a, {TopologyOption::required, ""});
  cmd->callback([a, exit_code] { *exit_code = run_compare(*a); });
}

}  // namespace wiresim::tools
