#include "accuracy/fit.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "accuracy/stats.h"

namespace wiresim::accuracy {
namespace {

constexpr double kUs = 1e-6, kGBps = 1e9;

const std::string kA100Hgx8 = "a100_hgx8_allreduce_oci-bm-gpu4-ocitutorials.csv";
const std::string kB200Ib2 = "b200_2node16_ib_allreduce_dstack-lambda.csv";
const std::string kB200Hgx8 = "b200_hgx8_allreduce_vultr-poc.csv";
const std::string kH100Hgx8 = "h100_hgx8_allreduce_nccl-tests-i290.csv";
const std::string kMi300x = "mi300x_1node8_allreduce_amd-rocm-docs.csv";
const std::string kA40Shm = "a40_pcie2_node_p2pdisable_allreduce_eugenesiow.csv";
const std::string kH100Shm = "h100_dgx4_p2pdisable_allreduce_eugenesiow.csv";
const std::string kH100SendRecv = "h100_hgx8_sendrecv_xxrjun-nccl-tests-cluster.csv";
const std::string kB200SendRecv = "b200_hgx8_sendrecv_vultr-poc.csv";
const std::string kH100AllGather = "h100_hgx8_allgather_ring_together-nccl-tests.csv";
const std::string kMi355xAllToAll2 = "mi355x_2node16_pollara400_alltoall_prasadnair-alibaba.csv";

models::ArchParams& arch(models::Params& p, const std::string& name) { return p.architectures.at(name); }

// SHM through host memory; 0 (the prior) means no cap beyond the PCIe path itself.
FittedConstant shm_constant(std::string name, std::vector<std::string> archs, std::string set, std::string why) {
  FittedConstant c;
  c.name = std::move(name);
  c.unit = "GB/s";
  c.lo = 0.5;
  c.hi = 60.0;
  c.grid = 0.1;
  c.prior = 0.0;
  c.datasets = {std::move(set)};
  c.why = std::move(why);
  c.set = [archs](models::Params& p, double v) {
    for (const auto& a : archs)
      arch(p, a).shm_bandwidth = v > 0.0 ? sim::BytesPerSec{v * kGBps} : sim::BytesPerSec::unlimited();
  };
  const std::string first = archs.front();
  c.get = [first](const models::Params& p) {
    const auto bw = p.architectures.at(first).shm_bandwidth;
    return bw.is_unlimited() ? 0.0 : bw.count() / kGBps;
  };
  return c;
}

// A P2P channel's rate (sizes from 1 MiB, where channels, not latency, set the time); 0 (the
// prior) means no cap beyond the links.
FittedConstant rate_constant(std::string name, std::string arch_name, std::string set, std::string why) {
  FittedConstant c;
  c.name = std::move(name);
  c.unit = "GB/s";
  c.lo = 2.0;
  c.hi = 120.0;
  c.grid = 0.1;
  c.prior = 0.0;
  c.datasets = {std::move(set)};
  c.region = Region::large;
  c.why = std::move(why);
  c.set = [arch_name](models::Params& p, double v) {
    arch(p, arch_name).p2p_channel_bw = v > 0.0 ? sim::BytesPerSec{v * kGBps} : sim::BytesPerSec::unlimited();
  };
  c.get = [arch_name](const models::Params& p) {
    const auto bw = p.architectures.at(arch_name).p2p_channel_bw;
    return bw.is_unlimited() ? 0.0 : bw.count() / kGBps;
  };
  return c;
}

std::vector<FittedConstant> make_constants() {
  using models::Params;
  using models::Protocol;
  std::vector<FittedConstant> out;
  out.push_back(time_constant(
      "host_launch", 10.0, {kA100Hgx8}, Region::floor,
      "host time to enqueue and launch one collective on one GPU (the -g 8 floor / 8)",
      [](Params& p) -> sim::Seconds& { return p.host_launch; }));
  // Not the 2-node H100 set: over its ramp the tuner runs the NVLS tree, whose tree sends NCCL's
  // ceiling for the kernel holds to a time that counts the overhead in (idle_sets).
  out.push_back(time_constant(
      "protocols.simple.overhead", 15.0, {kA100Hgx8, kB200Ib2, kMi300x}, Region::ramp,
      "what each Simple send costs its channel beyond its bytes (fences, flags)",
      [](Params& p) -> sim::Seconds& { return p.protocols[static_cast<int>(Protocol::simple)].overhead; }));
  out.push_back(time_constant(
      "protocols.ll128.overhead", 15.0, {kA100Hgx8, kMi300x}, Region::ramp,
      // The tuner picks LL128 on no size of the H100 and B200 fit sets (idle_sets): no Hopper
      // or Blackwell data fits this constant.
      "what each LL128 send costs its channel beyond its bytes (fitted on Ampere and CDNA3 only)",
      [](Params& p) -> sim::Seconds& { return p.protocols[static_cast<int>(Protocol::ll128)].overhead; }));
  {
    // Hopper's own LL128 send cost, fitted on the one Hopper set whose tuner runs LL128 rings
    // (8-64 MiB of an 8-GPU all_gather); its prior, -1, means none: the protocol's value.
    FittedConstant c;
    c.name = "architectures.hopper.ll128_overhead";
    c.unit = "us";
    c.lo = 0.0;
    c.hi = 15.0;
    c.grid = 0.1;
    c.prior = -1.0;
    c.datasets = {kH100AllGather};
    c.region = Region::large;
    c.why = "what each LL128 send costs its channel on Hopper (protocols.ll128.overhead elsewhere)";
    c.set = [](Params& p, double v) {
      auto& o = arch(p, "hopper").ll128_overhead;
      if (v < 0.0) o.reset();
      else o = sim::Seconds{v * kUs};
    };
    c.get = [](const Params& p) {
      const auto& o = p.architectures.at("hopper").ll128_overhead;
      return o ? o->count() / kUs : -1.0;
    };
    out.push_back(c);
  }
  out.push_back(time_constant(
      "architectures.blackwell.launch_overhead", 30.0, {kB200Ib2, kB200Hgx8, kB200SendRecv}, Region::floor,
      "per-collective GPU-side cost on Blackwell beyond NCCL's latency tables",
      [](Params& p) -> sim::Seconds& { return arch(p, "blackwell").launch_overhead; }));
  out.push_back(time_constant(
      "architectures.blackwell.nvlink_step_extra", 5.0, {kB200Ib2, kB200Hgx8, kB200SendRecv}, Region::floor,
      "what each step over NVLink costs on Blackwell beyond NCCL's latency table",
      [](Params& p) -> sim::Seconds& { return arch(p, "blackwell").nvlink_step_extra; }));
  out.push_back(time_constant(
      "architectures.cdna3.launch_overhead", 60.0, {kMi300x}, Region::floor,
      "per-collective cost of RCCL on ROCm beyond NCCL's latency tables (MI300X)",
      [](Params& p) -> sim::Seconds& { return arch(p, "cdna3").launch_overhead; }));
  // MI355X's own: its one-node sets run one process for 8 GPUs (-g 8), whose floor is the
  // host's launches, so the 2-node all_to_all with a process per GPU (-g 1) fits it.
  out.push_back(time_constant(
      "architectures.cdna4.launch_overhead", 60.0, {kMi355xAllToAll2}, Region::floor,
      "per-collective cost of RCCL on ROCm beyond NCCL's latency tables (MI355X)",
      [](Params& p) -> sim::Seconds& { return arch(p, "cdna4").launch_overhead; }));
  out.push_back(time_constant(
      "architectures.hopper.nvls_step_overhead", 20.0, {kH100Hgx8}, Region::all,
      "what each NVLS loop costs a GPU's reduce-scatter and all-gather streams on Hopper",
      [](Params& p) -> sim::Seconds& { return arch(p, "hopper").nvls_step_overhead; }));
  out.push_back(time_constant(
      "architectures.blackwell.nvls_step_overhead", 20.0, {kB200Hgx8}, Region::ramp,
      "what each NVLS loop costs a GPU's reduce-scatter and all-gather streams on Blackwell",
      [](Params& p) -> sim::Seconds& { return arch(p, "blackwell").nvls_step_overhead; }));
  out.push_back(time_constant(
      "architectures.blackwell.nvls_start", 60.0, {kB200Hgx8}, Region::large,
      "what an NVLS collective costs once before its first loop on Blackwell, beyond NCCL's latency table",
      [](Params& p) -> sim::Seconds& { return arch(p, "blackwell").nvls_start; }));
  {
    FittedConstant c;
    c.name = "architectures.blackwell.nvls_efficiency";
    c.unit = "";
    c.lo = 0.5;
    c.hi = 1.0;
    c.grid = 0.01;
    c.prior = 0.74;   // NCCL's own tuning value (src/graph/tuning.cc nvlsEfficiency)
    c.datasets = {kB200Hgx8};
    c.region = Region::plateau;
    c.why = "NVLink SHARP throughput on Blackwell as a share of the port rate (NCCL's tuning model says 0.74)";
    c.set = [](Params& p, double v) { arch(p, "blackwell").nvls_efficiency = v; };
    c.get = [](const Params& p) { return p.architectures.at("blackwell").nvls_efficiency; };
    out.push_back(c);
  }
  out.push_back(rate_constant("architectures.hopper.p2p_channel_bw", "hopper", kH100SendRecv,
                              "what one point-to-point channel moves each way over NVLink on Hopper"));
  out.push_back(rate_constant("architectures.blackwell.p2p_channel_bw", "blackwell", kB200SendRecv,
                              "what one point-to-point channel moves each way over NVLink on Blackwell"));
  out.push_back(shm_constant("architectures.ampere.shm_bandwidth", {"ampere", "ada"}, kA40Shm,
                             "GPU-to-GPU rate staged through host memory on a PCIe Gen4 host (Ada takes the same value)"));
  out.push_back(shm_constant("architectures.hopper.shm_bandwidth", {"hopper"}, kH100Shm,
                             "GPU-to-GPU rate staged through host memory on a PCIe Gen5 host"));
  return out;
}

double loss_of(const Result& r, Region region, Loss loss) {
  if (loss == Loss::median) return stats(r, region).median_abs;
  double total = 0.0;
  int n = 0;
  for (const auto& p : r.points)
    if (in_region(p.size, region)) total += std::min(std::abs(p.error()), 100.0), ++n;
  return n ? total / n : NAN;
}

// Runs every set (in parallel, as many at a time as there are cores) and sums their losses.
double evaluate(const std::vector<const Prepared*>& sets, Region region, const models::Params& params,
                models::Method method, Loss loss = Loss::median) {
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> medians(sets.size(), 0.0);
  std::vector<std::future<void>> running;
  std::size_t next = 0;
  while (next < sets.size() || !running.empty()) {
    while (next < sets.size() && running.size() < workers) {
      const std::size_t i = next++;
      running.push_back(std::async(std::launch::async, [&, i] {
        const Result r = run(*sets[i], params, method);
        const double m = loss_of(r, region, loss);
        medians[i] = r.skipped || std::isnan(m) ? 1e3 : m;
      }));
    }
    running.front().get();
    running.erase(running.begin());
  }
  double total = 0.0;
  for (double m : medians) total += m;
  return total;
}

}  // namespace

FittedConstant time_constant(std::string name, double hi, std::vector<std::string> sets, Region region, std::string why,
                             std::function<sim::Seconds&(models::Params&)> field) {
  return time_constant(
      std::move(name), hi, std::move(sets), region, std::move(why),
      [field](models::Params& p, sim::Seconds v) { field(p) = v; },
      [field](const models::Params& p) { return field(const_cast<models::Params&>(p)); });
}

FittedConstant time_constant(std::string name, double hi, std::vector<std::string> sets, Region region, std::string why,
                             std::function<void(models::Params&, sim::Seconds)> write,
                             std::function<sim::Seconds(const models::Params&)> in_force) {
  FittedConstant c;
  c.name = std::move(name);
  c.unit = "us";
  c.lo = 0.0;
  c.hi = hi;
  c.grid = 0.1;
  c.prior = 0.0;
  c.datasets = std::move(sets);
  c.region = region;
  c.why = std::move(why);
  c.set = [write](models::Params& p, double v) { write(p, sim::Seconds{v * kUs}); };
  c.get = [in_force](const models::Params& p) { return in_force(p).count() / kUs; };
  return c;
}

double constant_objective(const FittedConstant& c, const std::vector<const Prepared*>& sets,
                          const models::Params& params, models::Method method, Loss loss) {
  return evaluate(sets, c.region, params, method, loss);
}

Prepared restricted(const Prepared& set, Region region) {
  Prepared out = set;
  std::erase_if(out.data.points, [region](const Measurement& m) { return !in_region(m.size, region); });
  return out;
}

const std::vector<FittedConstant>& fitted_constants() {
  static const std::vector<FittedConstant> constants = make_constants();
  return constants;
}

FitReport fit(const std::vector<Prepared>& sets, const models::Params& start, const FitOptions& options,
              const std::vector<FittedConstant>& constants) {
  FitReport rep;
  rep.params = start;
  std::map<std::string, const Prepared*> by_name;
  for (const auto& s : sets)
    if (!s.skipped && s.map.role == Role::fit && !options.exclude.count(s.name)) by_name[s.name] = &s;
  std::vector<const FittedConstant*> active;
  for (const auto& c : constants) {
    FitReport::Value v{c.name, c.unit, c.get(start), c.get(start), false};
    for (const auto& d : c.datasets) v.fitted = v.fitted || by_name.count(d);
    if (!v.fitted) {
      v.value = c.prior;
      c.set(rep.params, c.prior);
    } else {
      active.push_back(&c);
    }
    rep.constants.push_back(v);
  }
  // Each constant's own sets, cut to its region, and objective.
  std::map<std::pair<std::string, Region>, Prepared> cut;
  for (const auto* c : active)
    for (const auto& d : c->datasets)
      if (by_name.count(d)) cut.try_emplace({d, c->region}, restricted(*by_name.at(d), c->region));
  const auto sets_of = [&](const FittedConstant& c) {
    std::vector<const Prepared*> out;
    for (const auto& d : c.datasets)
      if (by_name.count(d)) out.push_back(&cut.at({d, c.region}));
    return out;
  };
  const auto total = [&](const models::Params& p) {
    double t = 0.0;
    for (const auto* c : active) t += evaluate(sets_of(*c), c->region, p, options.method, options.loss);
    return t;
  };
  rep.objective_before = total(rep.params);
  for (int sweep = 0; sweep < options.max_sweeps; ++sweep) {
    bool moved = false;
    rep.sweeps = sweep + 1;
    for (const auto* c : active) {
      const auto own = sets_of(*c);
      const auto at = [&](double v) {
        models::Params p = rep.params;
        c->set(p, v);
        return evaluate(own, c->region, p, options.method, options.loss);
      };
      const auto snap = [&](double v) { return std::clamp(std::round(v / c->grid) * c->grid, c->lo, c->hi); };
      const double current = snap(c->get(rep.params));
      double value = current, value_score = at(current);
      // Golden-section search over the range, then the grid points around its answer.
      double a = c->lo, b = c->hi;
      const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
      double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
      double f1 = at(x1), f2 = at(x2);
      while (b - a > 4 * c->grid) {
        if (f1 <= f2) {
          b = x2, x2 = x1, f2 = f1;
          x1 = b - phi * (b - a), f1 = at(x1);
        } else {
          a = x1, x1 = x2, f1 = f2;
          x2 = a + phi * (b - a), f2 = at(x2);
        }
      }
      for (double v : {snap(0.5 * (a + b)), current})
        for (int k = -3; k <= 3; ++k) {
          const double x = snap(v + k * c->grid);
          const double f = at(x);
          // Strictly better only: a tie keeps the current value, so the fit is a fixed point.
          if (f < value_score - 1e-9) value = x, value_score = f;
        }
      if (std::abs(value - c->get(rep.params)) > 1e-12) {
        moved = moved || std::abs(value - current) > 1e-12;
        c->set(rep.params, value);
      }
      if (options.verbose)
        fmt::print(stderr, "fit: sweep {} {} = {} (its objective {:.2f})\n", sweep + 1, c->name, format_value(*c, value),
                   value_score);
    }
    if (!moved) {
      rep.converged = true;
      break;
    }
  }
  rep.objective_after = total(rep.params);
  for (std::size_t i = 0; i < constants.size(); ++i) rep.constants[i].value = constants[i].get(rep.params);
  return rep;
}

std::vector<std::string> idle_sets(const FittedConstant& c, const std::vector<Prepared>& sets,
                                   const models::Params& params, models::Method method) {
  const double at = c.get(params);
  const double step = std::max(0.25 * std::abs(at), 10.0 * c.grid);
  std::vector<double> probes;
  for (double v : {at - step, at + step})
    if (const double x = std::clamp(v, c.lo, c.hi); x != at) probes.push_back(x);
  const auto loss = [&](const Prepared& s, const models::Params& p) {
    return loss_of(run(s, p, method), c.region, Loss::median);
  };
  std::vector<std::string> idle;
  for (const auto& whole : sets) {
    if (whole.skipped || std::find(c.datasets.begin(), c.datasets.end(), whole.name) == c.datasets.end()) continue;
    const Prepared s = restricted(whole, c.region);
    const double here = loss(s, params);
    bool moves = false;
    for (double x : probes) {
      models::Params p = params;
      c.set(p, x);
      const double there = loss(s, p);
      moves = moves || std::isnan(here) != std::isnan(there) || std::abs(there - here) > 0.01;
    }
    if (!moves) idle.push_back(s.name);
  }
  return idle;
}

std::vector<ClassScore> cross_validate(const std::vector<Prepared>& sets, const models::Params& params,
                                       const FitOptions& options) {
  std::map<std::string, std::vector<const Prepared*>> classes;
  for (const auto& s : sets)
    if (!s.skipped && s.map.role != Role::holdout) classes[s.map.hw_class].push_back(&s);
  std::vector<ClassScore> out;
  for (const auto& [name, members] : classes) {
    ClassScore score;
    score.hw_class = name;
    score.sets = static_cast<int>(members.size());
    FitOptions o = options;
    for (const auto* m : members) o.exclude.insert(m->name);
    const FitReport rep = fit(sets, params, o);
    for (const auto& v : rep.constants)
      if (!v.fitted) score.priors.push_back(v.name);
    std::vector<Result> given, refitted;
    for (const auto* m : members) {
      given.push_back(run(*m, params, options.method));
      refitted.push_back(run(*m, rep.params, options.method));
    }
    const auto all = [](const Result&) { return true; };
    score.in_sample = summarise(given, all);
    score.cross_validated = summarise(refitted, all);
    out.push_back(std::move(score));
  }
  return out;
}

std::string format_value(const FittedConstant& c, double value) {
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(c.grid) - 1e-9)));
  return fmt::format("{:.{}f}{}", value, decimals, c.unit);
}

std::string write_fitted(std::string text, const FitReport& report) {
  for (std::size_t i = 0; i < fitted_constants().size(); ++i) {
    const auto& c = fitted_constants()[i];
    // Every line tagged with the constant (an architecture that takes another's value
    // carries the same tag).
    const std::string tag = "[F:" + c.name + "]";
    const std::string key = c.name.substr(c.name.rfind('.') + 1);
    const std::regex value("(\\b" + key + ":\\s*)([^,}\\s#]+)");
    for (std::size_t at = text.find(tag); at != std::string::npos; at = text.find(tag, at + tag.size())) {
      const std::size_t begin = text.rfind('\n', at) + 1;
      const std::string line = text.substr(begin, at - begin);
      std::smatch m;
      std::string updated = line;
      if (std::regex_search(line, m, value))
        updated = m.prefix().str() + m[1].str() + format_value(c, report.constants[i].value) + m.suffix().str();
      text.replace(begin, line.size(), updated);
      at = begin + updated.size();
    }
  }
  return text;
}

}  // namespace wiresim::accuracy
