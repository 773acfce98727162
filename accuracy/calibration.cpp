#include "accuracy/calibration.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "accuracy/bands.h"
#include "accuracy/fit.h"
#include "accuracy/runner.h"
#include "accuracy/stats.h"
#include "calibrate/nccl_tests_log.h"
#include "input/file.h"
#include "input/input_error.h"
#include "models/machine.h"

namespace wiresim::accuracy {
namespace {

namespace fs = std::filesystem;
using calibrate::FitSummary;
using calibrate::NcclTestsLog;
using calibrate::NcclTestsRow;
using calibrate::Overlay;
using calibrate::ParameterOverlay;

constexpr double kUs = 1e-6;

models::ArchParams& arch_of(models::Params& p, const std::string& name) {
  auto it = p.architectures.find(name);
  if (it == p.architectures.end()) it = p.architectures.emplace(name, p.arch("default")).first;
  return it->second;
}

// One log as a data set on the topology: its ranks, its '-g', its out-of-place times.
Prepared prepare_log(const std::string& path, const ModelFitOptions& o,
                     const std::shared_ptr<const topo::LinkGraph>& graph) {
  const std::string text = input::read_file(path);
  if (!calibrate::looks_like_nccl_tests_log(text) && text.find("size_bytes,time_us") != std::string::npos) {
    // A validation table (validation/data/*.csv): its '# hardware:' line does not say the
    // rank count in a form to trust, so every GPU of the topology (or --gpus-per-node) runs it.
    Prepared s;
    s.file = path;
    s.name = fs::path(path).filename().string();
    s.map.topology = o.topology;
    s.map.settings = o.settings;
    s.map.gpus_per_node = o.gpus_per_node;
    s.map.role = accuracy::Role::fit;
    s.map.hw_class = "log";
    s.data = accuracy::read_data(path);
    s.graph = graph;
    return s;
  }
  const NcclTestsLog log = calibrate::parse_nccl_tests_log(text, path);
  if (!log.collective) throw input::InputError(path, 0, 0, "cannot tell which collective the log measured");
  const int ranks = log.rank_count().value_or(0);
  const int available = static_cast<int>(graph->gpus().size());
  if (ranks < 2 || ranks > available)
    throw input::InputError(path, 0, 0,
                            fmt::format("the log ran {} ranks; {} has {} GPUs (use --set to grow a cluster)", ranks,
                                        o.topology, available));
  Prepared s;
  s.file = path;
  s.name = fs::path(path).filename().string();
  s.map.topology = o.topology;
  s.map.settings = o.settings;
  s.map.gpus = ranks;
  s.map.gpus_per_node = o.gpus_per_node;
  s.map.role = accuracy::Role::fit;
  s.map.hw_class = "log";
  s.data.collective = std::string(input::to_string(*log.collective));
  s.data.gpus_per_thread = log.n_gpus.value_or(1);
  for (const NcclTestsRow& row : log.rows)
    if (row.size.count() > 0.0 && row.out_of_place.time.count() > 0.0)
      s.data.points.push_back({row.size.count(), row.out_of_place.time.us()});
  if (s.data.points.empty()) throw input::InputError(path, 0, 0, "no timed sizes in the log");
  s.graph = graph;
  return s;
}

// Every hold_out-th size held out (when a log has at least hold_out sizes).
std::pair<Prepared, Prepared> split(const Prepared& s, int hold_out) {
  Prepared fit = s, held = s;
  fit.data.points.clear();
  held.data.points.clear();
  for (std::size_t i = 0; i < s.data.points.size(); ++i) {
    const bool out = hold_out >= 2 && static_cast<int>(s.data.points.size()) >= hold_out &&
                     static_cast<int>(i % hold_out) == hold_out - 1;
    (out ? held : fit).data.points.push_back(s.data.points[i]);
  }
  return {fit, held};
}

bool has_region(const std::vector<Prepared>& sets, Region r) {
  for (const auto& s : sets)
    for (const auto& p : s.data.points)
      if (accuracy::in_region(p.size, r)) return true;
  return false;
}

// The link tiers the logs' GPUs reach each other over.
std::set<topo::Tier> tiers_crossed(const std::vector<Prepared>& sets, const models::Params& params) {
  std::set<topo::Tier> tiers;
  for (const auto& s : sets) {
    const models::Machine m(*s.graph, params, {.p2p = s.map.p2p});
    const auto ranks = accuracy::pick_ranks(*s.graph, s.map);
    for (auto a : ranks)
      for (auto b : ranks)
        if (a != b)
          for (auto l : m.route(a, b)) tiers.insert(s.graph->link(l).tier);
  }
  return tiers;
}

std::vector<FittedConstant> candidates(const std::string& arch, const std::set<topo::Tier>& tiers) {
  std::vector<FittedConstant> out;
  for (topo::Tier t : tiers) {
    FittedConstant c;
    c.name = fmt::format("link_efficiency.{}", topo::to_string(t));
    c.unit = "";
    c.lo = 0.3;
    c.hi = 1.0;
    c.grid = 0.005;
    c.region = Region::plateau;
    c.why = fmt::format("payload rate over {} links as a share of their raw rate", topo::to_string(t));
    c.set = [arch, t](models::Params& p, double v) { arch_of(p, arch).link_efficiency[t] = v; };
    c.get = [arch, t](const models::Params& p) { return p.arch(arch).efficiency(t); };
    out.push_back(c);
  }
  out.push_back(time_constant("launch_overhead", 100.0, {}, Region::floor, "per collective, beyond NCCL's tables",
                               [arch](models::Params& p) -> sim::Seconds& { return arch_of(p, arch).launch_overhead; }));
  out.push_back(time_constant("host_launch", 20.0, {}, Region::floor, "host time per collective per GPU a thread launches",
                               [](models::Params& p) -> sim::Seconds& { return p.host_launch; }));
  // Each protocol's as it runs on this architecture: a fit writes the architecture's own value
  // (ArchParams::simple_overhead, ll128_overhead), read where unset from the protocol's.
  out.push_back(time_constant(
      "protocol_overhead.simple", 30.0, {}, Region::ramp, "per Simple send",
      [arch](models::Params& p, sim::Seconds v) { arch_of(p, arch).simple_overhead = v; },
      [arch](const models::Params& p) { return p.protocol_on(p.arch(arch), models::Protocol::simple).overhead; }));
  out.push_back(time_constant(
      "protocol_overhead.ll128", 30.0, {}, Region::ramp, "per LL128 send",
      [arch](models::Params& p, sim::Seconds v) { arch_of(p, arch).ll128_overhead = v; },
      [arch](const models::Params& p) { return p.protocol_on(p.arch(arch), models::Protocol::ll128).overhead; }));
  return out;
}

double pooled_median(const std::vector<Prepared>& sets, const models::Params& params, models::Method method) {
  std::vector<double> errors;
  for (const auto& s : sets) {
    if (s.data.points.empty()) continue;
    const auto r = accuracy::run(s, params, method);
    if (r.skipped) throw input::InputError(s.file, 0, 0, *r.skipped);
    for (const auto& p : r.points) errors.push_back(p.error());
  }
  return accuracy::stats_of(errors).median_abs;
}

std::vector<const Prepared*> pointers(const std::vector<Prepared>& sets) {
  std::vector<const Prepared*> out;
  for (const auto& s : sets) out.push_back(&s);
  return out;
}

// How far a log's mean |busbw error| in a region strays with the parameters right: the model's
// validated error on the log's hardware class there (accuracy/bands.yaml: measured/predicted,
// 10th-90th percentile over the class's checked data sets), taken as a normal spread, in %.
double region_sigma_pct(const Prepared& s, Region r) {
  const std::string cls = accuracy::hardware_class(*s.graph, accuracy::pick_ranks(*s.graph, s.map), s.map.p2p);
  const double size = r == Region::floor ? 1024.0 : r == Region::ramp ? double(1 << 20) : double(1 << 30);
  const Band b = accuracy::shipped_bands().at(cls, size);
  if (b.points == 0 || b.low <= 0.0 || b.high <= b.low) return 0.0;
  return 100.0 * std::log(b.high / b.low) / (2.0 * 1.2816);
}

// The rise of a constant's objective (the sum over the sets of their capped mean |error| in
// its region) that the data must show before they move it off its built-in value: kSignificance
// standard errors of that sum, each set's mean over its n sizes in the region straying by
// sigma / sqrt(n).
constexpr double kSignificance = 2.0;
double significance_threshold(const FittedConstant& c, const std::vector<Prepared>& sets) {
  double variance = 0.0;
  for (const auto& s : sets) {
    int n = 0;
    for (const auto& p : s.data.points) n += accuracy::in_region(p.size, c.region) ? 1 : 0;
    if (n == 0) continue;
    const double sigma = region_sigma_pct(s, c.region == Region::large ? Region::plateau : c.region);
    variance += sigma * sigma / n;
  }
  return kSignificance * std::sqrt(variance);
}

// The fit, without the constants it drives to a bound of their range: a log that wants a link
// efficiency below 0.3 or an overhead below zero shows something the constant does not stand
// for (a degraded fabric, a cost the model puts elsewhere), and a value pinned there is no
// estimate. Such a constant keeps its built-in value (its `parameters` entry says why) and the
// others are fitted again without it.
models::Params fit_within_range(const std::vector<Prepared>& fit_part, const models::Params& start, const FitOptions& fo,
                                std::vector<FittedConstant>& active, std::vector<FittedParameter>& parameters) {
  for (;;) {
    if (active.empty()) return start;
    const FitReport rep = accuracy::fit(fit_part, start, fo, active);
    std::vector<FittedConstant> inside;
    for (const auto& c : active) {
      const double v = c.get(rep.params);
      if (std::abs(v - c.lo) > 1e-9 && std::abs(v - c.hi) > 1e-9) {
        inside.push_back(c);
        continue;
      }
      for (auto& p : parameters)
        if (p.name == c.name) {
          p.fitted = false;
          p.note = fmt::format("kept at its built-in value: the fit puts it at the bound of its range ({}), where it "
                               "is no estimate", format_value(c, v));
        }
    }
    if (inside.size() == active.size()) return rep.params;
    active = std::move(inside);
  }
}

}  // namespace

ModelFit fit_model(const std::vector<std::string>& logs, const ModelFitOptions& o, const models::Params& start) {
  const auto graph = std::make_shared<const topo::LinkGraph>(topo::load_topology(o.topology, o.settings));
  if (graph->gpus().empty()) throw input::InputError(o.topology, 0, 0, "the topology has no GPUs");
  std::vector<Prepared> sets;
  for (const auto& path : logs) sets.push_back(prepare_log(path, o, graph));
  ModelFit f = fit_model(sets, o.hold_out, o.method, start);
  f.overlay.fit->logs = logs;
  f.overlay.fit->topology = o.topology;
  return f;
}

ModelFit fit_model(const std::vector<accuracy::Prepared>& sets, int hold_out, models::Method method,
                   const models::Params& start) {
  if (hold_out < 2) throw input::InputError("--hold-out: expected 2 or more (every Nth size is held out)");
  ModelFitOptions o;
  o.hold_out = hold_out;
  o.method = method;
  for (const auto& s : sets)
    if (s.skipped) throw input::InputError(s.file, 0, 0, *s.skipped);
  ModelFit f;
  f.architecture = sets.front().graph->device(sets.front().graph->gpus().front()).arch;
  std::vector<Prepared> whole, fit_part, held_part;
  std::vector<std::string> names;
  for (const auto& set : sets) {
    whole.push_back(set);
    whole.back().map.role = accuracy::Role::fit;
    auto [fit, held] = split(whole.back(), o.hold_out);
    fit_part.push_back(std::move(fit));
    held_part.push_back(std::move(held));
    names.push_back(whole.back().name);
  }
  // What the logs can tell: the tiers they cross whose efficiency moves their plateau (or their
  // largest sizes), and the regions they have sizes in.
  auto constants = candidates(f.architecture, tiers_crossed(whole, start));
  const auto fit_sets = pointers(fit_part);
  for (auto& c : constants) c.datasets = names;
  std::vector<FittedConstant> active;
  for (auto& c : constants) {
    FittedParameter p{c.name, c.unit, c.get(start), c.get(start), c.get(start), c.get(start), false, ""};
    if (c.name.rfind("link_efficiency.", 0) == 0 && !has_region(fit_part, Region::plateau)) c.region = Region::large;
    if (!has_region(fit_part, c.region)) {
      p.note = fmt::format("not fitted: the logs have no sizes in its region ({})", accuracy::to_string(c.region));
    } else {
      // Does the prediction move with it at all? (A launch overhead under a host-launch floor,
      // an efficiency of a tier that is never the bottleneck, do not.)
      const bool efficiency = c.name.rfind("link_efficiency.", 0) == 0;
      const double here = constant_objective(c, fit_sets, start, o.method, Loss::capped_mean);
      for (double step : efficiency ? std::vector<double>{0.8, 0.5} : std::vector<double>{5.0, 20.0, 60.0}) {
        models::Params moved = start;
        c.set(moved, std::clamp(efficiency ? c.get(start) * step : c.get(start) + step, c.lo, c.hi));
        if (std::abs(constant_objective(c, fit_sets, moved, o.method, Loss::capped_mean) - here) >= 0.05) p.fitted = true;
        if (p.fitted) break;
      }
      if (!p.fitted) p.note = "not fitted: the logged collectives do not depend on it";
      // Does the log disagree with the built-in model there by more than the model's validated
      // error on this hardware? If not, there is nothing for the parameter to correct.
      const double needed = significance_threshold(c, fit_part);
      if (p.fitted && here <= needed) {
        p.fitted = false;
        p.note = fmt::format("kept at its built-in value: the logs agree with it within the model's validated error "
                             "on this hardware ({:.2f} % mean error in its region; {:.2f} % would be evidence)",
                             here, needed);
      }
    }
    if (p.fitted) active.push_back(c);
    f.parameters.push_back(p);
  }
  FitOptions fo;
  fo.method = o.method;
  fo.loss = Loss::capped_mean;
  f.params = fit_within_range(fit_part, start, fo, active, f.parameters);
  // Values and profile intervals.
  for (auto& p : f.parameters) {
    if (!p.fitted) continue;
    const auto& c = *std::find_if(active.begin(), active.end(), [&](const FittedConstant& x) { return x.name == p.name; });
    p.value = c.get(f.params);
    const double best = constant_objective(c, fit_sets, f.params, o.method, Loss::capped_mean);
    const double limit = best + std::max(1.0, 0.1 * best);
    const auto edge = [&](double direction) {
      double v = p.value;
      for (int k = 1; k <= 40; ++k) {
        const double next = std::clamp(p.value + direction * k * c.grid * (k > 10 ? 4 : 1), c.lo, c.hi);
        models::Params trial = f.params;
        c.set(trial, next);
        if (constant_objective(c, fit_sets, trial, o.method, Loss::capped_mean) > limit) break;
        v = next;
        if (next == c.lo || next == c.hi) break;
      }
      return v;
    };
    p.low = edge(-1.0);
    p.high = edge(+1.0);
  }
  for (const auto& h : held_part) f.held_out_sizes += static_cast<int>(h.data.points.size());
  if (f.held_out_sizes > 0) {
    f.held_out_before_pct = pooled_median(held_part, start, o.method);
    f.held_out_after_pct = pooled_median(held_part, f.params, o.method);
  }
  f.fitted_before_pct = pooled_median(fit_part, start, o.method);
  f.fitted_after_pct = pooled_median(fit_part, f.params, o.method);
  // Leave one log out: predict each log from a fit on the others.
  if (whole.size() >= 2) {
    for (std::size_t i = 0; i < whole.size(); ++i) {
      std::vector<Prepared> others;
      for (std::size_t j = 0; j < whole.size(); ++j)
        if (j != i) others.push_back(fit_part[j]);
      auto subset = active;
      for (auto& c : subset) {
        c.datasets.clear();
        for (const auto& s : others) c.datasets.push_back(s.name);
      }
      std::vector<FittedParameter> unused;
      for (const auto& c : subset) unused.push_back({c.name, c.unit, c.get(start), c.get(start), 0.0, 0.0, true, ""});
      const models::Params fitted = fit_within_range(others, start, fo, subset, unused);
      // The others' values reach this log only where it lies in their scope.
      const auto [op, spans] = problem_scope(whole[i]);
      const bool covered = fit_scope(others).covers(op, spans);
      f.leave_one_out.push_back({whole[i].name, pooled_median({whole[i]}, start, o.method),
                                 pooled_median({whole[i]}, covered ? fitted : start, o.method)});
    }
  }
  // The overlay: what was fitted, and how it did on the held-out sizes.
  ParameterOverlay po;
  po.architecture = f.architecture;
  for (const auto& p : f.parameters) {
    if (!p.fitted) continue;
    if (p.name.rfind("link_efficiency.", 0) == 0) {
      if (const auto t = topo::tier_from_string(p.name.substr(16))) po.link_efficiency[*t] = p.value;
    } else if (p.name == "launch_overhead") {
      po.launch_overhead = sim::Seconds{p.value * kUs};
    } else if (p.name == "host_launch") {
      po.host_launch = sim::Seconds{p.value * kUs};
    } else if (p.name == "protocol_overhead.simple") {
      po.simple_overhead = sim::Seconds{p.value * kUs};
    } else if (p.name == "protocol_overhead.ll128") {
      po.ll128_overhead = sim::Seconds{p.value * kUs};
    }
  }
  po.scope = fit_scope(whole);
  f.overlay.parameters = po;
  FitSummary summary;
  summary.logs = names;
  summary.held_out_sizes = f.held_out_sizes;
  summary.held_out_error_before_pct = f.held_out_before_pct;
  summary.held_out_error_after_pct = f.held_out_after_pct;
  f.overlay.fit = summary;
  return f;
}

std::pair<input::Collective, bool> problem_scope(const Prepared& set) {
  if (set.skipped || !set.graph) throw input::InputError(set.file, 0, 0, set.skipped.value_or("not read"));
  const auto op = input::parse_collective(set.map.collective.value_or(set.data.collective));
  if (!op) throw input::InputError(set.file, 0, 0, "no '# collective:' header naming the test and no 'collective:' in the map");
  return {*op, spans_nodes(*set.graph, pick_ranks(*set.graph, set.map))};
}

bool spans_nodes(const topo::LinkGraph& graph, const std::vector<topo::DeviceId>& ranks) {
  for (auto r : ranks)
    if (graph.device(r).node != graph.device(ranks.front()).node) return true;
  return false;
}

calibrate::FitScope fit_scope(const std::vector<Prepared>& sets) {
  calibrate::FitScope scope;
  for (const auto& s : sets) {
    const auto [op, spans] = problem_scope(s);
    if (std::find(scope.collectives.begin(), scope.collectives.end(), op) == scope.collectives.end())
      scope.collectives.push_back(op);
    (spans ? scope.across_nodes : scope.within_node) = true;
  }
  return scope;
}

bool apply_parameters(models::Params& params, const Overlay& overlay, input::Collective op, bool across_nodes) {
  const bool covered = !overlay.parameters || !overlay.parameters->scope ||
                       overlay.parameters->scope->covers(op, across_nodes);
  Overlay scoped = overlay;
  if (!covered) scoped.parameters.reset();   // the measured tiers still apply
  apply_parameters(params, scoped);
  return covered;
}

void apply_parameters(models::Params& params, const Overlay& overlay) {
  // A tier the overlay measured carries a measured rate: scaling it by the link efficiency
  // as well would count the protocol overhead twice.
  for (const auto& [tier, t] : overlay.tiers)
    if (t.bandwidth || t.efficiency)
      for (auto& [name, arch] : params.architectures) arch.link_efficiency[tier] = 1.0;
  if (!overlay.parameters) return;
  const ParameterOverlay& p = *overlay.parameters;
  models::ArchParams& a = arch_of(params, p.architecture);
  for (const auto& [tier, e] : p.link_efficiency) a.link_efficiency[tier] = e;
  if (p.launch_overhead) a.launch_overhead = *p.launch_overhead;
  if (p.host_launch) params.host_launch = *p.host_launch;
  if (p.simple_overhead) a.simple_overhead = *p.simple_overhead;
  if (p.ll128_overhead) a.ll128_overhead = *p.ll128_overhead;
}

}  // namespace wiresim::accuracy
