// The machine options every simulating command shares, registered once: the topology
// (--topo, --set), the model parameters (--params), a calibration overlay (--overlay),
// faults (--fail, --degrade), transports (--p2p, --gdr, --net), the simulation limits
// (--max-memory, --max-events) and --format. `coll`, `run`, `sweep`, `jobs` and `calibrate
// compare` take all of them; `plan` all but the topology's and the overlay; `validate`, whose
// data sets name their own topologies and transports, the rest.
//
//   MachineOptions o;
//   add_machine_options(cmd, o, {TopologyOption::required, "table, csv or json"});
//   ...
//   const MachineInput in = load_machine_input(o, o.topo, topo::parse_overrides(o.settings));
//   const models::Machine machine = in.machine();
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "accuracy/bands.h"
#include "accuracy/calibration.h"
#include "calibrate/overlay.h"
#include "input/input_error.h"
#include "models/limits.h"
#include "models/machine.h"
#include "models/params.h"
#include "models/tuner.h"
#include "tools/commands.h"
#include "topologies/builder.h"
#include "topologies/faults.h"

namespace wiresim::tools {

struct MachineOptions {
  std::string topo;
  std::vector<std::string> settings;
  std::string params;
  std::string overlay;
  std::string p2p;   // --p2p, --gdr, --net; empty: not given (a scenario's `transport:`, else NCCL's default)
  std::string gdr;
  std::string net;
  std::string p2p_level;
  std::vector<std::string> fail;
  std::vector<std::string> degrade;
  std::string max_memory = "8GiB";
  std::string max_events = "2e9";
  std::string format = "table";
};

// required: the command needs --topo; optional: it has another source (a scenario's);
// none: the inputs name their topologies (validate, plan), so no --topo, --set, --fail or --degrade.
enum class TopologyOption { required, optional, none };

struct MachineOptionSet {
  TopologyOption topology = TopologyOption::required;
  std::string formats = "table, csv or json";   // --format's help; the command checks the value
  bool overlay = true;   // false: the command spans many topologies (plan), so no one overlay fits
  bool transports = true;   // --p2p, --gdr, --net; false: the inputs name their own (validate)
};

inline void add_machine_options(CLI::App* cmd, MachineOptions& o, const MachineOptionSet& set) {
  if (set.topology != TopologyOption::none) {
    auto* topo = cmd->add_option("--topo", o.topo,
                                 set.topology == TopologyOption::required ? "topology YAML file"
                                                                          : "topology YAML file, replacing the scenario's");
    if (set.topology == TopologyOption::required) topo->required();
    cmd->add_option("--set", o.settings, "override a topology parameter, e.g. --set nodes=2");
    cmd->add_option("--fail", o.fail,
                    "take a device's links (or a link 'a->b') out of service, glob patterns: node0.nic0, spine*");
    cmd->add_option("--degrade", o.degrade, "keep a share of their bandwidth: PATTERN=SHARE, e.g. spine*=50%");
  }
  if (set.transports) {
    cmd->add_option("--p2p", o.p2p, "on (default) or off: NCCL_P2P_DISABLE=1, GPUs exchange through host memory (SHM)");
    cmd->add_option("--gdr", o.gdr,
                    "GPUDirect RDMA: auto (default, NCCL's rule: GPU and NIC within PXB or P2C), on, or off (NET data "
                    "staged through host memory)");
    cmd->add_option("--p2p-level", o.p2p_level,
                    "NCCL_P2P_LEVEL: the farthest PCIe path two GPUs of a node still use P2P over, as NCCL names "
                    "it (PIX, PXB, PHB, SYS, ...; default auto: NCCL's PXB); farther pairs stage through host memory");
    cmd->add_option("--net", o.net,
                    "NCCL's network transport: ib (default: NET/IB, InfiniBand or RoCE verbs) or socket (NET/Socket, "
                    "kernel TCP through host memory, as NCCL_IB_DISABLE=1)");
  }
  cmd->add_option("--params", o.params, "model parameter file replacing the built-in models/params.yaml");
  if (set.overlay)
    cmd->add_option("--overlay", o.overlay, "calibration overlay (from `wiresim calibrate fit -o`) laid over the topology");
  cmd->add_option("--max-memory", o.max_memory, "refuse a simulation estimated to need more memory (default 8GiB)");
  cmd->add_option("--max-events", o.max_events, "refuse a simulation estimated to take more events (default 2e9)");
  if (!set.formats.empty()) cmd->add_option("--format", o.format, set.formats);
}

// --pick (coll, validate, run, sweep, jobs): the tuner's ranking by name; an InputError naming the flag.
inline models::Ranking pick_option(const std::string& text) {
  const auto rank = models::parse_ranking(text);
  if (!rank) throw input::InputError(fmt::format("--pick: expected fastest or nccl, got '{}'", text));
  return *rank;
}

// The line every output of run, sweep and jobs gives a pick other than the closed form's fastest.
inline std::string pick_note(const std::string& pick) {
  return fmt::format("pick: {} (each collective's algorithm as NCCL's own cost model picks it)", pick);
}

// --p2p on|off (off: NCCL_P2P_DISABLE=1), --p2p-level auto|PIX|PXB|PHB|SYS|... (NCCL_P2P_LEVEL),
// --gdr auto|on|off (NCCL_NET_GDR_LEVEL; auto: NCCL's rule), --net ib|socket over `base` (a scenario's `transport:`, else NCCL's defaults): an option
// given on the command line wins.
inline models::Transports resolve_transports(const MachineOptions& o, models::Transports base = {}) {
  const auto knob = [](const std::string& flag, const std::string& text, const std::string& expected, auto parse,
                       auto& out) {
    if (text.empty()) return;
    const auto v = parse(text);
    if (!v) throw input::InputError(fmt::format("{}: expected {}, got '{}'", flag, expected, text));
    out = *v;
  };
  knob("--p2p", o.p2p, "on or off", models::parse_p2p, base.p2p);
  knob("--gdr", o.gdr, "auto, on or off", models::parse_gdr, base.gdr);
  knob("--net", o.net, "ib or socket", models::parse_net, base.net);
  if (o.p2p_level == "auto") base.p2p_level.reset();
  else knob("--p2p-level", o.p2p_level, "auto, LOC, NVL, PIX, PXB, PHB or SYS", models::parse_path_type, base.p2p_level);
  return base;
}

// --params, or the built-in parameters (before any overlay).
inline models::Params base_params(const MachineOptions& o) {
  return o.params.empty() ? models::default_params() : models::load_params(o.params);
}

// What the options load: the graph with the overlay's measured tiers laid over it, the
// parameters, the transport rule and the limits.
struct MachineInput {
  topo::LinkGraph graph;
  models::Params params;
  models::Transports transports;
  models::Limits limits;
  std::vector<calibrate::AppliedTier> applied;   // what the overlay changed
  std::string overlay;                           // one line naming the overlay; empty: none
  std::optional<double> overlay_error;           // its fit's held-out median |error| (fraction)
  std::string overlay_path;
  std::string faults;                            // one line naming --fail/--degrade; empty: none
  std::optional<calibrate::Overlay> overlay_data;
  models::Params params_before_overlay;

  // The machine to run on; it refers to this input's graph and parameters.
  models::Machine machine() const { return models::Machine(graph, params, transports); }

  // What this machine differs in from its topology as shipped, one line each (defined below,
  // after transport_note).
  std::vector<std::string> conditions() const;

  // For one collective on `ranks`: the overlay's fitted parameters apply only within their
  // scope (calibrate::FitScope); outside it the built-in ones do, and the overlay's line says so.
  void scope_overlay(models::Collective op, const std::vector<topo::DeviceId>& ranks) {
    if (!overlay_data) return;
    params = params_before_overlay;
    overlay = calibrate::describe_overlay(overlay_path, *overlay_data);
    const bool spans = accuracy::spans_nodes(graph, ranks);
    if (accuracy::apply_parameters(params, *overlay_data, op, spans)) return;
    overlay += fmt::format("; its fitted parameters are NOT applied to {} {} (outside their scope: built-in values)",
                           models::to_string(op), spans ? "across nodes" : "within one node");
    overlay_error.reset();
  }
};

// `topology` and `overrides` are the command's resolved ones (a scenario may name them).
inline MachineInput load_machine_input(const MachineOptions& o, const std::string& topology,
                                       const topo::Overrides& overrides, models::Transports file_transports = {}) {
  MachineInput in{topo::load_topology(topology, overrides),
                  base_params(o),
                  resolve_transports(o, file_transports),
                  {models::parse_max_memory(o.max_memory), models::parse_max_events(o.max_events)},
                  {}, {}, {}, o.overlay, {}, {}, {}};
  print_warnings(in.graph.warnings);
  if (!o.overlay.empty()) {
    const calibrate::Overlay overlay = calibrate::read_overlay(o.overlay);
    in.overlay_data = overlay;
    in.params_before_overlay = in.params;
    in.applied = calibrate::apply_overlay(in.graph, overlay);
    accuracy::apply_parameters(in.params, overlay);
    in.overlay = calibrate::describe_overlay(o.overlay, overlay);
    // A workload step runs several collectives on one machine: the fitted values reach all of
    // them (coll, with one collective, applies them within their scope only: scope_overlay).
    if (overlay.parameters && overlay.parameters->scope)
      in.overlay += "; applied to every collective here, in its scope or not";
    if (overlay.fit) in.overlay_error = overlay.fit->held_out_error_after_pct / 100.0;
  }
  // After the overlay: a measured tier's rate is the healthy one, then the faults.
  in.faults = topo::apply_faults(in.graph, o.fail, o.degrade).summary;
  return in;
}

// One line for the outputs when the transport is not NCCL's default; empty otherwise.
inline std::string transport_note(const models::Transports& t) {
  std::string note;
  const auto add = [&](const std::string& part) { note += (note.empty() ? "transport: " : "; ") + part; };
  if (!t.p2p) add("p2p off (NCCL_P2P_DISABLE=1): GPUs of a node exchange through host memory");
  if (t.p2p && t.p2p_level)
    add(fmt::format("P2P level {} (NCCL_P2P_LEVEL={}): GPU pairs farther apart than {} exchange through host memory, "
                    "nearer ones directly",
                    models::to_string(*t.p2p_level), models::to_string(*t.p2p_level), models::to_string(*t.p2p_level)));
  if (t.gdr != models::Gdr::automatic)
    add(fmt::format("gdr {}: {}", t.gdr == models::Gdr::on ? "on" : "off",
                    t.gdr == models::Gdr::on ? "GPUDirect RDMA for every GPU-NIC pair"
                                             : "no GPUDirect RDMA: NET data staged through host memory"));
  if (t.net == models::Net::socket)
    add("net socket (NET/Socket, NCCL_IB_DISABLE=1): kernel TCP through host memory, one socket per connection "
        "(see models/params.yaml net_socket)");
  return note;
}

// In the order every output names them: the calibration overlay (as scoped last), a transport
// other than NCCL's default (transport_note), the --fail/--degrade faults. Tables print each as
// a '# ' line, CSV on stderr (its rows stay plain), JSON under the keys overlay, transport and
// faults.
inline std::vector<std::string> MachineInput::conditions() const {
  std::vector<std::string> lines;
  if (!overlay.empty()) lines.push_back("overlay " + overlay);
  if (std::string t = transport_note(transports); !t.empty()) lines.push_back(std::move(t));
  if (!faults.empty()) lines.push_back("faults: " + faults);
  return lines;
}

// --bands: the interval a prediction at `size` carries (accuracy/bands.h): the overlay's
// held-out error where the overlay was fitted with `calibrate fit --topo`, else the shipped
// cross-validated band of the hardware class of `ranks`.
class PredictionBands {
 public:
  PredictionBands(const MachineInput& in, const std::vector<topo::DeviceId>& ranks)
      : in_(in), hw_class_(accuracy::hardware_class(in.graph, ranks, in.transports.p2p)) {}
  accuracy::Band at(double size_bytes) const {
    if (in_.overlay_error) return accuracy::overlay_band(*in_.overlay_error, in_.overlay_path);
    return accuracy::shipped_bands().at(hw_class_, size_bytes);
  }
  const std::string& hw_class() const { return hw_class_; }

 private:
  const MachineInput& in_;
  std::string hw_class_;
};

}  // namespace wiresim::tools
