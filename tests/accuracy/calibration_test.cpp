// Model-based calibration (calibrate/model_fit.h): the model's own parameters fitted to logs,
// checked on held-out sizes. Oracles: a synthetic log made by wiresim with known parameters is
// fitted back to them; real logs of one cluster predict each other better after the fit.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <tuple>


#include "accuracy/calibration.h"
#include "accuracy/dataset.h"
#include "accuracy/runner.h"
#include "accuracy/stats.h"
#include "calibrate/overlay.h"
#include "input/input_error.h"
#include "tests/approx.h"
#include "tests/sanitized.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::accuracy;
using wiresim::calibrate::parse_overlay;
using wiresim::calibrate::write_overlay;
using wiresim::calibrate::Overlay;

namespace {

const std::string kSource = WIRESIM_SOURCE_DIR;

Prepared on_topology(const std::string& name, const std::string& topology, const std::string& collective) {
  Prepared s;
  s.file = name;
  s.name = name;
  s.map.topology = kSource + "/topologies/" + topology;
  s.map.role = Role::fit;
  s.data.collective = collective;
  s.graph = std::make_shared<const topo::LinkGraph>(topo::load_topology(s.map.topology));
  return s;
}

// The shipped validation sets of these names, mapped as validation/map.yaml maps them.
std::vector<Prepared> shipped(const std::vector<std::string>& names) {
  const auto map = read_map(kSource + "/validation/map.yaml");
  std::vector<std::string> files;
  for (const auto& n : names) files.push_back(kSource + "/validation/data/" + n);
  auto sets = prepare(files, map, "validation/map.yaml");
  for (auto& s : sets) REQUIRE_FALSE(s.skipped);
  return sets;
}

double median_error(const Prepared& set, const models::Params& params) {
  std::vector<double> e;
  for (const auto& p : run(set, params, models::Method::simulate).points) e.push_back(p.error());
  return stats_of(e).median_abs;
}

// The parameters a user of the fit's overlay gets for `target`: the built-in ones with the
// overlay applied within its scope (what `coll` and `validate --overlay` do), and whether the
// fit's parameters reach it (its scope covers the target's collective and reach, or it has no
// scope).
struct Scoped {
  models::Params params;
  bool covered;
};
Scoped scoped_params(const ModelFit& f, const Prepared& target) {
  Scoped s{models::default_params(), false};
  const auto [op, spans] = problem_scope(target);
  s.covered = apply_parameters(s.params, f.overlay, op, spans);
  return s;
}

}  // namespace

TEST_CASE("a synthetic log made with known parameters is fitted back to them within 2%") {
  // Truth: A100 NVLink at 0.70 of its raw rate, a 6 us Simple send overhead and a 12 us launch
  // overhead per collective; the fit starts from the built-in values (models/params.yaml). (An A100
  // box: no NVLS, so ring/Simple carries the large sizes and its overhead shows.)
  models::Params truth = models::default_params();
  truth.architectures.at("ampere").link_efficiency[topo::Tier::nvlink] = 0.70;
  truth.protocols[static_cast<int>(models::Protocol::simple)].overhead = sim::Seconds{6e-6};
  truth.architectures.at("ampere").launch_overhead = sim::Seconds{12e-6};
  Prepared log = on_topology("synthetic.csv", "hgx-a100.yaml", "all_reduce");
  for (double size = 8; size <= 4.0 * (1 << 30); size *= 2) log.data.points.push_back({size, 1.0});
  const auto made = run(log, truth, models::Method::simulate);
  REQUIRE_FALSE(made.skipped);
  for (std::size_t i = 0; i < log.data.points.size(); ++i) log.data.points[i].time_us = made.points[i].predicted_us;
  const ModelFit f = fit_model({log}, 3, models::Method::simulate, models::default_params());
  const auto value = [&](const std::string& name) {
    for (const auto& p : f.parameters)
      if (p.name == name) {
        CHECK_MESSAGE(p.fitted, name);
        return p.value;
      }
    FAIL("no parameter " << name);
    return 0.0;
  };
  CHECK(value("link_efficiency.nvlink") == rel_approx(0.70).epsilon(0.02));
  CHECK(value("protocol_overhead.simple") == rel_approx(6.0).epsilon(0.02));
  CHECK(value("launch_overhead") == rel_approx(12.0).epsilon(0.02));
  CHECK(f.held_out_after_pct < 1.0);
  CHECK(f.held_out_before_pct > 10.0);
  CHECK(f.improves());
  // The overlay carries the values for Hopper and reads back the same.
  std::ostringstream text;
  write_overlay(text, f.overlay, "test");
  const Overlay back = parse_overlay(text.str(), "fit.yaml");
  REQUIRE(back.parameters);
  CHECK(back.parameters->architecture == "ampere");
  CHECK(back.parameters->link_efficiency.at(topo::Tier::nvlink) == rel_approx(value("link_efficiency.nvlink")).epsilon(1e-3));
  REQUIRE(back.fit);
  CHECK(back.fit->held_out_sizes == f.held_out_sizes);
  models::Params applied = models::default_params();
  apply_parameters(applied, back);
  CHECK(applied.arch("ampere").efficiency(topo::Tier::nvlink) == rel_approx(0.70).epsilon(0.02));
  const models::Params builtin = models::default_params();
  CHECK(applied.arch("hopper").efficiency(topo::Tier::nvlink) == builtin.arch("hopper").efficiency(topo::Tier::nvlink));   // untouched
  // Its scope is what the log measured: all_reduce on one node. It reads back the same, and the
  // fitted values reach the ring-family collectives on one node only: an all_to_all, or an
  // all_reduce across nodes, keeps every built-in value.
  // The Simple overhead as it runs on the overlay's architecture, and on another.
  const auto simple = [](const models::Params& p, const char* arch = "ampere") {
    return p.protocol_on(p.arch(arch), models::Protocol::simple).overhead.count() * 1e6;
  };
  for (const auto& c : {std::tuple{input::Collective::all_reduce, false, true},
                        std::tuple{input::Collective::all_gather, false, true},
                        std::tuple{input::Collective::all_to_all, false, false},
                        std::tuple{input::Collective::all_reduce, true, false}}) {
    const input::Collective op = std::get<0>(c);
    const bool spans = std::get<1>(c), applies = std::get<2>(c);
    const std::string name(input::to_string(op));
    CAPTURE(name);
    CAPTURE(spans);
    models::Params p = models::default_params();
    CHECK(apply_parameters(p, back, op, spans) == applies);
    if (applies) {
      CHECK(p.arch("ampere").efficiency(topo::Tier::nvlink) == rel_approx(0.70).epsilon(0.02));
      CHECK(simple(p) == rel_approx(6.0).epsilon(0.02));
      CHECK(simple(p, "hopper") == simple(builtin, "hopper"));   // other architectures keep theirs
    } else {   // the built-in values, exactly
      CHECK(p.arch("ampere").efficiency(topo::Tier::nvlink) == builtin.arch("ampere").efficiency(topo::Tier::nvlink));
      CHECK(simple(p) == simple(builtin));
    }
  }
}

TEST_CASE("the V100 log calibrated on itself predicts its held-out sizes better") {
  ModelFitOptions o;
  o.topology = kSource + "/topologies/dgx1-v100.yaml";
  const ModelFit f =
      fit_model({kSource + "/tests/data/calibrate/log_allreduce_v100_8gpu_legacy-format.txt"}, o, models::default_params());
  CHECK(f.held_out_sizes >= 6);
  CHECK(f.held_out_after_pct < f.held_out_before_pct);
  CHECK(f.held_out_after_pct < 10.0);
  // A tier the 8-GPU NVLink mesh's collectives never wait on is reported, not guessed.
  bool upi_reported = false;
  for (const auto& p : f.parameters)
    if (p.name == "link_efficiency.upi") upi_reported = !p.fitted && !p.note.empty();
  CHECK(upi_reported);
}

TEST_CASE("calibrated on one log of a cluster, wiresim predicts another log of it better") {
  // Data sets of validation/map.yaml with role fit or checked (never a holdout) that share a
  // machine (same source, same cluster). Each source set listed is fitted on its own (every
  // third size held out, as `calibrate fit` does) and every other set of its group is predicted
  // with the fitted parameters, every size scored.
  //
  // The oracle: where calibration changes a prediction it makes it better (`after < before`, or
  // `after <= before + 0.25` points where before is already under 1 %, the scatter of repeated
  // nccl-tests runs); it may also leave it exactly as it was. Unchanged is not a failure, it is
  // the rule at work: a parameter stays at its built-in value where the source log does not
  // disagree with the model, in that parameter's size region, by more than the model's validated
  // error on that hardware class (accuracy/bands.yaml) allows, or where the fit drives it to a
  // bound of its range; and a parameter the other log's collective does not depend on cannot
  // move it. MI325X's 1-node log (three plateau sizes, 2.7 % off; class amd needs 4.3 %) is the
  // case the rule is for: it used to lower the xGMI efficiency 0.80 -> 0.775 and take the 2-node
  // prediction from 0.17 % to 1.27 %; now it moves nothing.
  //
  // A fit's values reach only the collectives it saw, at the reach it saw (within one node or
  // across nodes: calibrate::FitScope). Before scopes, a fit on an alltoall or sendrecv log moved
  // the NVLink efficiency and worsened the node's ring/NVLS collectives (B200 alltoall ->
  // allgather 3.5 -> 11.0 %, sendrecv -> allgather 3.5 -> 4.4 %, H100 xxrjun alltoall ->
  // sendrecv 5.2 -> 17.1 %), and a fit on B200's 2-node ring logs raised the Simple/LL128
  // overheads to ~17-20 us and worsened the 1-node logs (allgather 3.5 -> 4.7 %); those pairs are
  // in the groups below now and leave their partners as they were. Left out for time: the H100
  // i290 2-node logs as sources (28 s each), B200's sendrecv logs as sources (24 s on one node,
  // 247 s on two), GB200's 64-GPU alltoall (a 585 s fit), and the NVIDIA alltoall logs and
  // MI355X's 2-node one (each P2P chunk is simulated: B200's 1-node fit takes 60 s, H100
  // xxrjun's 11 s; the test below fits that one and checks its scope). Every pair of theirs
  // here was across families or reaches, so unchanged.
  // A pair outside the fit's scope (with no measured tier) is unchanged by construction: it is
  // counted, not simulated again.
  struct Group {
    std::vector<std::string> sets;
    std::vector<std::size_t> sources;   // indices into sets
    // Fitted and predicted in about a second in Release. The sanitizer build (tests/sanitized.h)
    // runs only these: the others (2-node or point-to-point fits, 17-25 s each in Release) took
    // about 1,100 s of its 2,164 s.
    bool quick = true;
  };
  const std::vector<Group> groups{
      {{"h100_hgx8_allgather_ring_together-nccl-tests.csv", "h100_hgx8_reducescatter_ring_together-nccl-tests.csv",
        "h100_hgx8_allreduce_nvls_together-nccl-tests.csv"},
       {0, 1, 2}},
      {{"h100_2node16_ib_ndr_allreduce_nccl-tests-i309.csv", "h100_2node16_ib_ndr_allreduce_nccl-tests-i309-ring.csv"},
       {0, 1},
       false},
      {{"h100_hgx8_allreduce_nccl-tests-i290.csv", "h100_2node16_ib_ndr_allreduce_nccl-tests-i290-default.csv",
        "h100_2node16_ib_ndr_allreduce_nccl-tests-i290-ring.csv"},
       {0}},
      {{"mi325x_1node8_roce_allreduce_rccl-tests-hisohara.csv", "mi325x_2node16_roce_allreduce_rccl-tests-hisohara.csv"},
       {0, 1}},
      {{"mi355x_1node8_allreduce_prasadnair-alibaba.csv", "mi355x_1node8_alltoall_prasadnair-alibaba.csv",
        "mi355x_2node16_pollara400_alltoall_prasadnair-alibaba.csv"},
       {0, 1}},
      {{"b200_hgx8_allgather_vultr-poc.csv", "b200_hgx8_allreduce_vultr-poc.csv", "b200_hgx8_reducescatter_vultr-poc.csv",
        "b200_hgx8_alltoall_vultr-poc.csv", "b200_hgx8_sendrecv_vultr-poc.csv", "b200_2node16_allgather_vultr-poc.csv",
        "b200_2node16_reducescatter_vultr-poc.csv", "b200_2node16_alltoall_vultr-poc.csv",
        "b200_2node16_sendrecv_vultr-poc.csv"},
       {0, 1, 2, 5, 6},
       false},
      {{"h100_hgx8_alltoall_xxrjun-nccl-tests-cluster.csv", "h100_hgx8_sendrecv_xxrjun-nccl-tests-cluster.csv"}, {1}, false},
  };
  int improved = 0, unchanged = 0;
  for (const auto& group : groups) {
    if (wiresim_test::kSanitized && !group.quick) continue;
    const auto sets = shipped(group.sets);
    // Each set's built-in error, simulated when a pair first needs it.
    std::vector<std::optional<double>> built_in(sets.size());
    const auto before = [&](std::size_t j) {
      if (!built_in[j]) built_in[j] = median_error(sets[j], models::default_params());
      return *built_in[j];
    };
    for (std::size_t i : group.sources) {
      const ModelFit f = fit_model({sets[i]}, 3, models::Method::simulate, models::default_params());
      for (std::size_t j = 0; j < sets.size(); ++j) {
        if (j == i) continue;
        const std::string& from = sets[i].name;
        const std::string& to = sets[j].name;
        CAPTURE(from);
        CAPTURE(to);
        const Scoped scoped = scoped_params(f, sets[j]);
        if (!scoped.covered && f.overlay.tiers.empty()) {
          ++unchanged;   // outside the fit's scope, and no measured tier: the built-in parameters
          continue;
        }
        const double was = before(j);
        const double after = median_error(sets[j], scoped.params);
        CAPTURE(was);
        CAPTURE(after);
        if (after == was) {
          ++unchanged;   // the fit moved nothing this log depends on: the same prediction
        } else {
          CHECK((after < was || (was < 1.0 && after <= was + 0.25)));
          improved += after < was ? 1 : 0;
        }
      }
    }
  }
  // Not vacuous: 4 pairs are predicted better (H100 Together reduce_scatter -> all_gather 9.5 ->
  // 1.6 % and -> NVLS all_reduce 3.6 -> 2.8 %; B200 2-node all_gather <-> reduce_scatter 23.4 ->
  // 20.5 % and 23.8 -> 17.0 %). Until stop 40 a fifth was H100 Together all_gather ->
  // reduce_scatter: Hopper's LL128 overhead is now fitted on that all_gather log
  // (validation/map.yaml, architectures.hopper.ll128_overhead), so calibrating on it finds the
  // built-in value and moves nothing. Before scopes 10 were, 5 of them across families (MI355X
  // alltoall -> allreduce 21.3 -> 21.2 %, B200 2-node ring logs -> alltoall, sendrecv 131 -> 112
  // %, 67 -> 30 %): the same rule that stops the harmful transfers above stops those; the
  // sources that used to fail are in now. The quick groups alone (the sanitizer build) have 2
  // (the H100 Together pairs).
  CHECK(improved >= (wiresim_test::kSanitized ? 2 : 4));
  MESSAGE(improved << " pairs predicted better, " << unchanged << " unchanged");
}

TEST_CASE("a fit on one collective leaves another collective's prediction as it was") {
  // The two logs of one H100 node pull the NVLink efficiency apart (alltoall 0.765, sendrecv
  // 0.895): the model's pairwise exchange and its point-to-point send do not carry the same
  // error. Applied everywhere, the alltoall fit took sendrecv from 5.2 to 17.1 % (its overheads
  // alone, without the efficiency, to 10.6 %); within its scope it does not reach sendrecv at
  // all, and `coll` and `validate --overlay` say so.
  const auto sets = shipped({"h100_hgx8_alltoall_xxrjun-nccl-tests-cluster.csv", "h100_hgx8_sendrecv_xxrjun-nccl-tests-cluster.csv"});
  const ModelFit f = fit_model({sets[0]}, 3, models::Method::simulate, models::default_params());
  REQUIRE(f.overlay.parameters);
  REQUIRE(f.overlay.parameters->scope);
  CHECK(f.overlay.parameters->scope->describe() == "all_to_all within one node");
  bool moved = false;
  for (const auto& p : f.parameters) moved = moved || p.fitted;
  CHECK(moved);   // not vacuous: the alltoall log did move a parameter
  CHECK_FALSE(scoped_params(f, sets[1]).covered);
  CHECK(median_error(sets[1], scoped_params(f, sets[1]).params) == median_error(sets[1], models::default_params()));
  CHECK(scoped_params(f, sets[0]).covered);
  CHECK(median_error(sets[0], scoped_params(f, sets[0]).params) < median_error(sets[0], models::default_params()));
}

TEST_CASE("a hold-out below 2 is refused") {
  ModelFitOptions o;
  o.topology = kSource + "/topologies/dgx1-v100.yaml";
  o.hold_out = 1;
  CHECK_THROWS_AS(fit_model({kSource + "/tests/data/calibrate/log_allreduce_v100_8gpu_legacy-format.txt"}, o,
                            models::default_params()),
                  input::InputError);
}

