// NCCL_P2P_LEVEL (Transports::p2p_level): which GPU pairs of a node use P2P and which stage
// through host memory, on the 2-socket A40 box (NVLink bridges 0-1, 2-3, ...; pairs on one
// socket read NODE, across the sockets SYS).
#include <doctest/doctest.h>

#include <string>

#include "models/machine.h"
#include "models/params.h"
#include "models/run.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

topo::LinkGraph a40() {
  return topo::load_topology(std::string(WIRESIM_SOURCE_DIR) + "/topologies/a40-pcie-8gpu-2socket.yaml", {});
}

Transports level(PathType t) { return {.p2p_level = t}; }

}  // namespace

TEST_CASE("NCCL_P2P_LEVEL names parse as NCCL spells them, and print back") {
  CHECK(parse_path_type("SYS") == PathType::sys);
  CHECK(parse_path_type("phb") == PathType::phb);
  CHECK(parse_path_type("Pxn") == PathType::pxn);
  CHECK_FALSE(parse_path_type("NODE").has_value());   // nvidia-smi's word, not NCCL's
  CHECK_FALSE(parse_path_type("SY").has_value());
  for (PathType t : {PathType::loc, PathType::nvl, PathType::pix, PathType::pxb, PathType::phb, PathType::sys})
    CHECK(parse_path_type(to_string(t)) == t);
}

TEST_CASE("P2P level: pairs up to it use P2P, farther ones stage through host memory") {
  const topo::LinkGraph g = a40();
  const auto gpu = [&](int i) { return g.gpus()[static_cast<std::size_t>(i)]; };
  const Machine nccl_default(g, default_params());
  CHECK(nccl_default.path_type(gpu(0), gpu(1)) == PathType::nvl);
  CHECK(nccl_default.path_type(gpu(1), gpu(2)) == PathType::phb);   // NODE: one socket, two root ports
  CHECK(nccl_default.path_type(gpu(0), gpu(6)) == PathType::sys);
  // NCCL's default level, PXB: only the NVLink pairs are P2P.
  CHECK(nccl_default.exchange(gpu(0), gpu(1)).name() == "P2P/NVLink");
  CHECK(nccl_default.exchange(gpu(1), gpu(2)).name() == "SHM");
  CHECK(nccl_default.exchange(gpu(0), gpu(6)).name() == "SHM");
  // PHB: the same-socket pair goes P2P over PCIe through its CPU, the cross-socket one still stages.
  const Machine phb(g, default_params(), level(PathType::phb));
  CHECK(phb.exchange(gpu(1), gpu(2)).name() == "P2P/PCIe");
  CHECK_FALSE(phb.staged(gpu(1), gpu(2)));
  CHECK(phb.exchange(gpu(0), gpu(6)).name() == "SHM");
  // SYS: every pair is P2P; the route crosses the inter-socket link, with no host buffer.
  const Machine sys(g, default_params(), level(PathType::sys));
  CHECK(sys.exchange(gpu(0), gpu(6)).name() == "P2P/PCIe");
  CHECK_FALSE(sys.exchange(gpu(0), gpu(6)).via_host);
  bool crosses_sockets = false;
  for (auto l : sys.route(gpu(0), gpu(6)))
    crosses_sockets = crosses_sockets || (g.device(g.link(l).from).kind == topo::DeviceKind::cpu &&
                                          g.device(g.link(l).to).kind == topo::DeviceKind::cpu);
  CHECK(crosses_sockets);
  // LOC: nothing is P2P, as with NCCL_P2P_DISABLE=1, NVLink pairs included.
  const Machine loc(g, default_params(), level(PathType::loc));
  CHECK(loc.exchange(gpu(0), gpu(1)).name() == "SHM");
  const Machine off(g, default_params(), {.p2p = false});
  CHECK(off.exchange(gpu(0), gpu(1)).name() == "SHM");
}

TEST_CASE("P2P level PHB: a NODE pair's all_reduce runs at its PCIe path's rate, not the SHM cap") {
  // Two GPUs: each sends S to the other over one route, so t >= S / (the route's bottleneck).
  const topo::LinkGraph g = a40();
  const auto a = g.gpus()[1], b = g.gpus()[2];
  const Machine staged(g, default_params());
  const Machine direct(g, default_params(), level(PathType::phb));
  const double size = 1024.0 * 1024 * 1024;
  const Problem p(Collective::all_reduce, sim::Bytes{size}, {a, b});
  const Choice c{Algorithm::ring, Protocol::simple, 2};
  const double t_direct = run_collective(direct, p, c, Method::simulate).time.count();
  const double t_staged = run_collective(staged, p, c, Method::simulate).time.count();
  const double bound = size / direct.rate(direct.route(a, b)).count();
  CHECK(t_direct >= bound);
  CHECK(t_direct <= 1.2 * bound);
  CHECK(t_staged > 2 * t_direct);   // SHM's copy through host memory is capped far lower
  CHECK(run_collective(direct, p, c, Method::analytic).time.count() == rel_approx(t_direct).epsilon(0.05));
}
