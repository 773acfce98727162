// How a step costs its communication: the strategy the step builder (scenarios/step.h) is
// given. Each strategy turns a collective, a point-to-point send or a host copy into a DAG
// fragment that the builder splices into the step, so every strategy composes with compute,
// pipeline stages and communicators the same way; only what a fragment holds differs:
//
//   SimulatedComm   the collective's chunk DAG (models::expand): simulated with the whole
//                   step, so groups that share links contend;
//   ClosedFormComm  one delay of the collective's closed-form time (models::predict,
//                   analytic): no contention between groups;
//   NaiveComm       one delay of the traffic a textbook counts over the bandwidth a spec
//                   sheet quotes for the wire (what a back-of-the-envelope estimate does);
//   FreeComm        nothing (an empty fragment): the same step bound by compute alone;
//   CountingComm    nothing for a collective, counting the DAG nodes another strategy
//                   would build (the limits check before a large step is built).
// An empty fragment is no communication: the builder joins what it waited for and binds
// no communicator.
//
//   const SimulatedComm simulate;
//   StepResult r = run_step(scenario, machine, simulate, limits);
#pragma once

#include <string>

#include "models/machine.h"
#include "models/plan.h"
#include "models/tuner.h"
#include "sim/transfer_dag.h"

namespace wiresim::scenarios {

// A fragment: node 0 starts it (the launch); its nodes without successors end it. Tracks are
// indices into the GPUs it runs on (a send: 0 the sender, 1 the receiver; a copy: 0 the
// receiving GPU).
struct CommPart {
  sim::TransferDag dag;
  std::string algorithm;   // for the output: "ring/simple", "naive", "send/recv"
  std::string note;        // how it was costed, when the output should say (naive)
  double stands_for = 0.0; // CountingComm: the DAG nodes the fragment it replaces would have
};

class CommCost {
 public:
  virtual ~CommCost() = default;
  // A collective, as the tuner chooses it under `options`; `kind` labels a delay.
  virtual CommPart collective(const models::Machine& machine, const models::Problem& problem,
                              const models::TunerOptions& options, const std::string& kind) const = 0;
  // One point-to-point send over NCCL from device `from` to device `to` (a pipeline handover).
  virtual CommPart send(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                        const std::string& kind) const = 0;
  // A plain copy engine transfer (host memory to a GPU): no NCCL step latency.
  virtual CommPart copy(const models::Machine& machine, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                        const std::string& label) const = 0;
  // True when fragments are chunk DAGs, whose size a step must check against the limits
  // (models/limits.h) before building them.
  virtual bool expands() const { return false; }
};

class SimulatedComm : public CommCost {
 public:
  CommPart collective(const models::Machine&, const models::Problem&, const models::TunerOptions&,
                      const std::string& kind) const override;
  CommPart send(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
  CommPart copy(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
  bool expands() const override { return true; }
};

class ClosedFormComm : public CommCost {
 public:
  CommPart collective(const models::Machine&, const models::Problem&, const models::TunerOptions&,
                      const std::string& kind) const override;
  CommPart send(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
  CommPart copy(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
};

// Bidirectional figures for NVLink (as NVIDIA quotes it), per direction for PCIe and NICs;
// an all_reduce moves twice its buffer, everything else once.
class NaiveComm : public CommCost {
 public:
  CommPart collective(const models::Machine&, const models::Problem&, const models::TunerOptions&,
                      const std::string& kind) const override;
  CommPart send(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
  CommPart copy(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
};

class FreeComm : public CommCost {
 public:
  CommPart collective(const models::Machine&, const models::Problem&, const models::TunerOptions&,
                      const std::string& kind) const override;
  CommPart send(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
  CommPart copy(const models::Machine&, topo::DeviceId, topo::DeviceId, sim::Bytes, const std::string&) const override;
};

// A collective is an empty fragment that stands for the plan `inner` would have built
// (models::estimate_plan's node count); sends and copies are `inner`'s own (a node each).
class CountingComm : public CommCost {
 public:
  explicit CountingComm(const CommCost& inner) : inner_(inner) {}
  CommPart collective(const models::Machine&, const models::Problem&, const models::TunerOptions&,
                      const std::string& kind) const override;
  CommPart send(const models::Machine& m, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                const std::string& kind) const override {
    return inner_.send(m, from, to, bytes, kind);
  }
  CommPart copy(const models::Machine& m, topo::DeviceId from, topo::DeviceId to, sim::Bytes bytes,
                const std::string& label) const override {
    return inner_.copy(m, from, to, bytes, label);
  }

 private:
  const CommCost& inner_;
};

}  // namespace wiresim::scenarios
