#include "topologies/plausibility.h"

#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace wiresim::topo {
namespace {

// 1.6 Tb/s (1.6TbE, the fastest network port shipping) in bytes per second.
constexpr double kFastestPort = 200e9;
// Standard port speeds in Gb/s: a rate of as many GB/s is 8x one of them.
constexpr std::array<double, 9> kStandardGbps{10, 25, 40, 50, 100, 200, 400, 800, 1600};

// A x16 link per direction after line encoding (hardware.md §5); Gen6 before FLIT overhead.
struct Generation {
  int number;
  double x16;   // B/s
};
constexpr Generation kGen3{3, 15.75e9}, kGen4{4, 31.5e9}, kGen5{5, 63.0e9}, kGen6{6, 128e9};

// The PCIe generation of each architecture's GPUs; blackwell and unknown: the fastest.
constexpr std::array<std::pair<std::string_view, Generation>, 8> kArchGeneration{{
    {"volta", kGen3}, {"turing", kGen3}, {"ampere", kGen4}, {"ada", kGen4},
    {"cdna2", kGen4}, {"hopper", kGen5}, {"cdna3", kGen5}, {"cdna4", kGen5}}};

// Rates within 1 % of a limit are the limit written with other rounding.
bool above(double rate, double limit) { return rate > limit * 1.01; }

}  // namespace

std::optional<std::string> network_rate_warning(sim::BytesPerSec per_cable) {
  const double r = per_cable.count();
  if (!above(r, kFastestPort)) return std::nullopt;
  std::string text = fmt::format("{} per cable is {:g} Tb/s, above the fastest network port (1.6 Tb/s)",
                                 sim::format_rate(per_cable), r * 8 / 1e12);
  for (double s : kStandardGbps)
    if (r == s * 1e9)
      return text + fmt::format("; network rates are quoted in bits: did you mean {:g}Gb/s ({:g} GB/s)?", s, s / 8);
  return text;
}

std::optional<std::string> pcie_rate_warning(sim::BytesPerSec per_link, std::string_view gpu_arch) {
  Generation gen = kGen6;
  std::string whose = "the fastest generation";
  for (const auto& [arch, g] : kArchGeneration)
    if (arch == gpu_arch) gen = g, whose = fmt::format("the generation of {} GPUs", arch);
  if (!above(per_link.count(), gen.x16)) return std::nullopt;
  return fmt::format("{} per link is above PCIe Gen{} x16 ({:g} GB/s per direction), {}; expected a rate per "
                     "direction (Gen4 x16 = 31.5GB/s, Gen5 x16 = 63GB/s)",
                     sim::format_rate(per_link), gen.number, gen.x16 / 1e9, whose);
}

}  // namespace wiresim::topo
