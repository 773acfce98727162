// all_to_all from a per-pair byte matrix (skewed MoE routing).
#include <doctest/doctest.h>

#include "input/input_error.h"
#include "models/alpha_beta.h"
#include "models/run.h"
#include "test_machines.h"
#include "tests/approx.h"

using namespace wiresim;
using namespace wiresim::models;

TEST_CASE("a hot destination bounds a skewed all_to_all") {
  const topo::LinkGraph g = testing::crossbar(4, sim::BytesPerSec{100e9});
  const Params params = testing::plain_params(true);
  const Machine m(g, params);
  Problem p{Collective::all_to_all, sim::Bytes{0}, g.gpus(), 0};
  const double mib = 1 << 20;
  // Every rank sends 8 MiB to rank 0 and 1 MiB to each other rank.
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) p.matrix.push_back(i == j ? 0.0 : (j == 0 ? 8 * mib : mib));
  p.size = sim::Bytes{8 * mib + 2 * mib};
  Detail d;
  run_collective(m, p, Choice{Algorithm::direct, Protocol::simple, 16}, Method::simulate, &d);
  // Rank 0's downlink carries 3 x 8 MiB; every flow into it gets a third of 100 GB/s, so the
  // exchange ends when those 24 MiB are in: 24 MiB / 100 GB/s.
  CHECK(d.run.links[g.in_links(g.gpus()[0])[0]].carried.count() == rel_approx(24 * mib));
  CHECK(d.run.makespan.count() == rel_approx(24 * mib / 100e9).epsilon(1e-6));
  // Pairwise sends the same bytes, step by step.
  Detail pw;
  run_collective(m, p, Choice{Algorithm::pairwise, Protocol::simple, 16}, Method::simulate, &pw);
  CHECK(pw.run.links[g.in_links(g.gpus()[0])[0]].carried.count() == rel_approx(24 * mib));
  // The closed form takes the largest send at its equal share, which here is exact.
  CHECK(estimate(m, p, Choice{Algorithm::direct, Protocol::simple, 16}).time.count() ==
        rel_approx(d.run.makespan.count()).epsilon(1e-6));
}

TEST_CASE("a traffic matrix of the wrong shape or for another collective is refused") {
  const topo::LinkGraph g = testing::crossbar(4, sim::BytesPerSec{100e9});
  const Params params = testing::plain_params(true);
  const Machine m(g, params);
  Problem p{Collective::all_to_all, sim::Bytes{1e6}, g.gpus(), 0};
  p.matrix.assign(9, 1.0);
  CHECK(why_not(m, p, Algorithm::direct, Protocol::simple)->find("3 x") == std::string::npos);
  CHECK(why_not(m, p, Algorithm::direct, Protocol::simple)->find("expected 4 x 4") != std::string::npos);
  p.op = Collective::all_reduce;
  p.matrix.assign(16, 1.0);
  CHECK(why_not(m, p, Algorithm::ring, Protocol::simple)->find("all_to_all only") != std::string::npos);
}
