// Several jobs on one fabric: alone, a job is its scenario's step; together on disjoint leaves
// nothing changes; sharing an oversubscribed uplink, both slow down, and the shared links say
// where. Bad job files fail at their line.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "input/input_error.h"
#include "models/params.h"
#include "scenarios/jobs.h"
#include "scenarios/step.h"
#include "tests/approx.h"
#include "tests/scratch_dir.h"
#include "topologies/builder.h"
#include "topologies/faults.h"

using namespace wiresim;
using namespace wiresim::scenarios;

namespace {

std::string repo(const std::string& path) { return std::string(WIRESIM_SOURCE_DIR) + "/" + path; }

JobsResult run_file(const std::string& file) {
  const JobsSpec spec = load_jobs(repo("scenarios/jobs/" + file));
  const topo::LinkGraph g = topo::load_topology(spec.topology, spec.set);
  const models::Machine m(g, models::default_params());
  return run_jobs(spec, m, SimulatedComm{});
}

std::string write_jobs(const std::string& name, const std::string& jobs) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path) << "topology: " << repo("topologies/cluster-h100-ib.yaml") << "\nset: {nodes: 4}\njobs:\n" << jobs;
  return path;
}

}  // namespace

TEST_CASE("jobs: alone, a job takes its scenario's step on its GPUs") {
  const JobsSpec spec = load_jobs(repo("scenarios/jobs/two-tp16-prefill.yaml"));
  const topo::LinkGraph g = topo::load_topology(spec.topology, spec.set);
  const models::Machine m(g, models::default_params());
  const JobsResult r = run_jobs(spec, m, SimulatedComm{});
  REQUIRE(r.jobs.size() == 2);
  // Job a: nodes 0 and 2, ranks 0-7 on node 0 and 8-15 on node 2.
  CHECK(r.jobs[0].gpus.front() == 0);
  CHECK(r.jobs[0].gpus[8] == 16);
  Scenario s = load_scenario(repo("scenarios/llama70b-2node-tp16.yaml"));
  s.layout.placement = Placement::explicit_map;
  s.layout.rank_map = r.jobs[0].gpus;
  CHECK(run_step(s, m, SimulatedComm{}).step.count() == r.jobs[0].alone.count());
}

TEST_CASE("jobs: on separate leaves nothing is shared and each runs as fast as alone") {
  const JobsResult r = run_file("two-tp16-prefill-same-leaf.yaml");
  CHECK(r.shared_count == 0);
  for (const JobOutcome& j : r.jobs) CHECK(j.together.count() == rel_approx(j.alone.count()).epsilon(1e-9));
}

TEST_CASE("jobs: two TP 16 prefills crossing the same oversubscribed uplinks slow each other down") {
  const JobsResult r = run_file("two-tp16-prefill.yaml");
  REQUIRE(r.jobs.size() == 2);
  // Alone, each job's cross-node all_reduce traffic is bound by its NICs: one 50 GB/s leaf
  // uplink per rail carries what one NIC sends. Together, two NICs' traffic shares that
  // uplink: the network part of every all_reduce doubles, and compute does not grow.
  for (const JobOutcome& j : r.jobs) {
    CAPTURE(j.name);
    CHECK(j.together.count() > 1.05 * j.alone.count());
    CHECK(j.together.count() < 2.0 * j.alone.count());
  }
  // The links both used are the leaf-spine uplinks (and down-links), every one of the 8 rails.
  REQUIRE(!r.shared.empty());
  CHECK(r.shared_count >= 16);
  for (const SharedLink& l : r.shared) {
    CAPTURE(l.link);
    CHECK((l.link.find("leaf") != std::string::npos || l.link.find("spine") != std::string::npos));
    CHECK(l.bytes[0].count() == rel_approx(l.bytes[1].count()).epsilon(0.05));   // symmetric jobs
    CHECK(l.utilisation <= 1.0 + 1e-9);   // no link carries more than its capacity x the run
  }
  // Conservation: the busiest uplink (50 GB/s) had to carry both jobs' bytes within the run.
  const double both = r.shared.front().bytes[0].count() + r.shared.front().bytes[1].count();
  CHECK(r.makespan.count() >= both / 50e9);
}

TEST_CASE("jobs: bad job files fail at the job's line with what was expected") {
  const auto error_of = [](const std::string& jobs) -> std::string {
    const std::string path = write_jobs("jobs_bad.yaml", jobs);
    try {
      const JobsSpec spec = load_jobs(path);
      const topo::LinkGraph g = topo::load_topology(spec.topology, spec.set);
      const models::Machine m(g, models::default_params());
      run_jobs(spec, m, SimulatedComm{});
    } catch (const input::InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string tp16 = repo("scenarios/llama70b-2node-tp16.yaml");
  CHECK(error_of("  - {name: a, scenario: " + tp16 + ", nodes: [0]}\n").find("needs 16 GPUs; it was given 8") !=
        std::string::npos);
  CHECK(error_of("  - {name: a, scenario: " + tp16 + ", nodes: [0, 1]}\n  - {name: b, scenario: " + tp16 +
                 ", nodes: [1, 2]}\n")
            .find("jobs_bad.yaml:5:5: job b: GPU 8 is job a's already") != std::string::npos);
  CHECK(error_of("  - {name: a, scenario: " + tp16 + ", nodes: [0, 9]}\n").find("node 9 has no GPU") != std::string::npos);
  CHECK(error_of("  - {name: a, scenario: " + tp16 + "}\n").find("nodes: [...] or gpus: [...]") != std::string::npos);
  CHECK(error_of("  - {name: a, scenario: " + tp16 + ", node: [0, 1]}\n").find("did you mean 'nodes'") !=
        std::string::npos);
}

TEST_CASE("jobs: a faults: section applies to the shared fabric; half-rate spines alone cost what sharing them does") {
  JobsSpec spec = load_jobs(repo("scenarios/jobs/two-tp16-prefill-spine-half.yaml"));
  CHECK(spec.degrade == std::vector<std::string>{"spine*=50%"});
  JobsSpec healthy_spec = load_jobs(repo("scenarios/jobs/two-tp16-prefill.yaml"));
  // The same all_reduces on both fabrics (the tuner picks by what it sees: on half-rate spines
  // the NVLS tree, on healthy ones the ring).
  for (JobsSpec* s : {&spec, &healthy_spec})
    for (Job& job : s->jobs) job.scenario.tp_algorithm = models::Algorithm::ring;
  topo::LinkGraph g = topo::load_topology(spec.topology, spec.set);
  topo::apply_faults(g, spec.fail, spec.degrade);
  const JobsResult half = run_jobs(spec, models::Machine(g, models::default_params()), SimulatedComm{});
  const topo::LinkGraph healthy_g = topo::load_topology(healthy_spec.topology, healthy_spec.set);
  const JobsResult healthy =
      run_jobs(healthy_spec, models::Machine(healthy_g, models::default_params()), SimulatedComm{});
  // One job's uplink traffic at 25 GB/s takes what two jobs' takes at 50 GB/s: the same
  // bottleneck, the same all_reduces.
  for (std::size_t j = 0; j < 2; ++j)
    CHECK(half.jobs[j].alone.count() == rel_approx(healthy.jobs[j].together.count()).epsilon(1e-6));
  CHECK(half.jobs[0].together.count() > 1.5 * half.jobs[0].alone.count());
}

TEST_CASE("jobs: placement policies, by hand; pack keeps two TP 16 prefills off the shared uplinks") {
  // Three jobs of 1, 2 and 1 nodes on 4 nodes. pack: a 0; b 1,2; c 3. interleave deals one node
  // per job per round: a 0, b 1, c 2, then b 3.
  const std::string tp8 = repo("scenarios/llama70b-tp8-prefill-ib.yaml");
  const std::string tp16 = repo("scenarios/llama70b-2node-tp16.yaml");
  const std::string path = write_jobs("jobs_place.yaml", "  - {name: a, scenario: " + tp8 + ", nodes: [3]}\n"
                                                         "  - {name: b, scenario: " + tp16 + ", nodes: [0, 2]}\n"
                                                         "  - {name: c, scenario: " + tp8 + ", nodes: [1]}\n");
  const JobsSpec spec = load_jobs(path);
  const topo::LinkGraph g = topo::load_topology(spec.topology, spec.set);
  const JobsSpec packed = place_jobs(spec, PlacementPolicy::pack, g);
  CHECK(packed.jobs[0].nodes == std::vector<int>{0});
  CHECK(packed.jobs[1].nodes == std::vector<int>{1, 2});
  CHECK(packed.jobs[2].nodes == std::vector<int>{3});
  const JobsSpec dealt = place_jobs(spec, PlacementPolicy::interleave, g);
  CHECK(dealt.jobs[0].nodes == std::vector<int>{0});
  CHECK(dealt.jobs[1].nodes == std::vector<int>{1, 3});
  CHECK(dealt.jobs[2].nodes == std::vector<int>{2});
  // The file's scenarios, names and starts stay.
  CHECK(dealt.jobs[1].name == "b");
  CHECK(dealt.jobs[1].scenario.layout.gpus() == 16);
  // Policies move whole nodes and cannot conjure more of them.
  const auto error_of = [&](const std::string& jobs) -> std::string {
    const JobsSpec s = load_jobs(write_jobs("jobs_place_bad.yaml", jobs));
    try {
      place_jobs(s, PlacementPolicy::pack, g);
    } catch (const input::InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_of("  - {name: a, scenario: " + tp8 + ", gpus: [0, 1, 2, 3, 4, 5, 6, 7]}\n")
            .find("job a: placement pack moves whole nodes") != std::string::npos);
  CHECK(error_of("  - {name: a, scenario: " + tp16 + ", nodes: [0, 1]}\n  - {name: b, scenario: " + tp16 +
                 ", nodes: [2, 3]}\n  - {name: c, scenario: " + tp8 + ", nodes: [0]}\n")
            .find("the jobs take 5 nodes") != std::string::npos);
  // On the 2:1 oversubscribed leaves of two-tp16-prefill.yaml (two nodes per leaf and rail),
  // the file interleaves the two jobs (a on 0,2; b on 1,3): both cross the uplinks. Packed, each
  // job's nodes share a leaf and it runs as fast as alone, as two-tp16-prefill-same-leaf.yaml.
  const JobsSpec file = load_jobs(repo("scenarios/jobs/two-tp16-prefill.yaml"));
  const topo::LinkGraph cluster = topo::load_topology(file.topology, file.set);
  const models::Machine m(cluster, models::default_params());
  const JobsResult as_given = run_jobs(file, m, SimulatedComm{});
  const JobsResult pack = run_jobs(place_jobs(file, PlacementPolicy::pack, cluster), m, SimulatedComm{});
  const JobsResult same_leaf = run_file("two-tp16-prefill-same-leaf.yaml");
  CHECK(pack.makespan.count() == rel_approx(same_leaf.makespan.count()).epsilon(1e-12));
  CHECK(pack.makespan.count() == rel_approx(pack.jobs[0].alone.count()).epsilon(1e-9));
  CHECK(as_given.makespan.count() > 1.2 * pack.makespan.count());
  const JobsResult dealt_file = run_jobs(place_jobs(file, PlacementPolicy::interleave, cluster), m, SimulatedComm{});
  CHECK(dealt_file.makespan.count() == rel_approx(as_given.makespan.count()).epsilon(1e-12));
}

TEST_CASE("jobs: compare_placements runs the file's placement and each policy's once, fastest first") {
  const JobsSpec file = load_jobs(repo("scenarios/jobs/two-tp16-prefill.yaml"));
  const topo::LinkGraph cluster = topo::load_topology(file.topology, file.set);
  const models::Machine m(cluster, models::default_params());
  const std::vector<PlacementRun> runs = compare_placements(file, m, SimulatedComm{});
  // The file interleaves its two jobs: interleave comes out the same and is merged with it.
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].names == std::vector<std::string>{"pack"});
  CHECK(runs[1].names == std::vector<std::string>{"as given", "interleave"});
  CHECK(runs[0].result.makespan < runs[1].result.makespan);
  CHECK(runs[0].worst_slowdown() == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(runs[1].worst_slowdown() > 1.2);
}
