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
  const JobsSpec spec = load_jobs(repo("scenarios/jobs/two-tp16-prefill-spine-half.yaml"));
  CHECK(spec.degrade == std::vector<std::string>{"spine*=50%"});
  topo::LinkGraph g = topo::load_topology(spec.topology, spec.set);
  topo::apply_faults(g, spec.fail, spec.degrade);
  const JobsResult half = run_jobs(spec, models::Machine(g, models::default_params()), SimulatedComm{});
  const JobsResult healthy = run_file("two-tp16-prefill.yaml");
  // One job's uplink traffic at 25 GB/s takes what two jobs' takes at 50 GB/s: the same
  // bottleneck, the same all_reduces.
  for (std::size_t j = 0; j < 2; ++j)
    CHECK(half.jobs[j].alone.count() == rel_approx(healthy.jobs[j].together.count()).epsilon(1e-6));
  CHECK(half.jobs[0].together.count() > 1.5 * half.jobs[0].alone.count());
}
