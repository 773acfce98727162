#include "scenarios/comm_cost.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/limits.h"
#include "models/predict.h"

namespace wiresim::scenarios {
namespace {

std::string algorithm_name(const models::Choice& c) {
  return fmt::format("{}/{}", models::to_string(c.algorithm), models::to_string(c.protocol));
}

// A fragment of one delay on track 0.
CommPart delay(sim::Seconds t, const std::string& label, std::string algorithm, std::string note = {}) {
  CommPart part;
  part.dag.add_delay(t, part.dag.intern_label(label), 0);
  part.algorithm = std::move(algorithm);
  part.note = std::move(note);
  return part;
}

// NCCL's per-step cost of a Simple send over the route's slowest tier class.
sim::Seconds send_step(const models::Machine& m, std::span<const sim::LinkId> route) {
  return m.params().step_latency(models::Algorithm::ring, models::Protocol::simple, m.tier_class(route));
}

// The quoted bandwidth of the slowest link between `a` and `b`, and the sentence saying so.
struct Quoted {
  sim::BytesPerSec rate;
  std::string note;
};
Quoted quoted_rate(const models::Machine& m, topo::DeviceId a, topo::DeviceId b) {
  double raw = INFINITY;
  topo::Tier tier = topo::Tier::nvlink;
  for (auto l : m.route(a, b)) {
    const auto& link = m.graph().link(l);
    if (link.bandwidth.count() < raw) {
      raw = link.bandwidth.count();
      tier = link.tier;
    }
  }
  const bool bidirectional = models::tier_class(tier) == models::TierClass::nvlink;
  const double quoted = bidirectional ? 2.0 * raw : raw;
  return {sim::BytesPerSec{quoted},
          fmt::format("naive: traffic / {:.0f} GB/s, the {} figure a spec sheet quotes for {} ({:.0f} GB/s per direction)",
                      quoted / 1e9, bidirectional ? "bidirectional" : "per-direction", topo::to_string(tier), raw / 1e9)};
}

}  // namespace

CommPart SimulatedComm::collective(const models::Machine& machine, const models::Problem& problem,
                                   const models::TunerOptions& options, const std::string&) const {
  const models::Decision d = models::tune(machine, problem, options);
  CommPart part;
  part.dag = models::expand(machine, problem, d.best).dag;
  part.algorithm = algorithm_name(d.best);
  return part;
}

CommPart SimulatedComm::send(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                             const std::string& kind) const {
  const auto route = machine.route(from, to);
  CommPart part;
  part.dag.add_transfer(route, bytes, std::max(send_step(machine, route), machine.wire_latency(route)),
                        sim::BytesPerSec::unlimited(), part.dag.intern_label(kind), 0, 1);
  part.algorithm = "send/recv";
  return part;
}

CommPart SimulatedComm::copy(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                             const std::string& label) const {
  CommPart part;
  part.dag.add_transfer(machine.route(from, to), bytes, std::nullopt, sim::BytesPerSec::unlimited(),
                        part.dag.intern_label(label), 0, 0);
  part.algorithm = "host copy";
  return part;
}

CommPart ClosedFormComm::collective(const models::Machine& machine, const models::Problem& problem,
                                    const models::TunerOptions& options, const std::string& kind) const {
  models::PredictOptions closed;
  closed.tuner = options;
  closed.method = models::Method::analytic;
  const models::Prediction p = models::predict(machine, problem, closed);
  return delay(p.outcome.time, kind, algorithm_name(p.decision.best));
}

CommPart ClosedFormComm::send(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                              const std::string& kind) const {
  const auto route = machine.route(from, to);
  return delay(send_step(machine, route) + bytes / machine.rate(route), kind, "send/recv");
}

CommPart ClosedFormComm::copy(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                              const std::string& label) const {
  const auto route = machine.route(from, to);
  return delay(machine.wire_latency(route) + bytes / machine.rate(route), label, "host copy");
}

CommPart NaiveComm::collective(const models::Machine& machine, const models::Problem& problem,
                               const models::TunerOptions&, const std::string& kind) const {
  const double traffic = problem.op == models::Collective::all_reduce ? 2.0 * problem.size.count() : problem.size.count();
  const Quoted q = quoted_rate(machine, problem.ranks[0], problem.ranks[1]);
  return delay(sim::Bytes{traffic} / q.rate, kind, "naive", q.note);
}

CommPart NaiveComm::send(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                         const std::string& kind) const {
  const Quoted q = quoted_rate(machine, from, to);
  return delay(bytes / q.rate, kind, "send/recv", q.note);
}

CommPart NaiveComm::copy(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                         const std::string& label) const {
  const auto route = machine.route(from, to);
  double raw = INFINITY;
  for (auto l : route) raw = std::min(raw, machine.graph().link(l).bandwidth.count());
  return delay(machine.wire_latency(route) + bytes / sim::BytesPerSec{raw}, label, "host copy",
               fmt::format("naive: each GPU's share over its host link's quoted {:.0f} GB/s per direction", raw / 1e9));
}

CommPart FreeComm::collective(const models::Machine&, const models::Problem&, const models::TunerOptions&,
                              const std::string&) const {
  return {};
}

CommPart FreeComm::send(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const {
  return {};
}

CommPart FreeComm::copy(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const {
  return {};
}

CommPart CountingComm::collective(const models::Machine& machine, const models::Problem& problem,
                                  const models::TunerOptions& options, const std::string&) const {
  const models::Decision d = models::tune(machine, problem, options);
  CommPart part;
  part.algorithm = algorithm_name(d.best);
  part.stands_for = models::estimate_plan(machine, problem, d.best).nodes;
  return part;
}

}  // namespace wiresim::scenarios
