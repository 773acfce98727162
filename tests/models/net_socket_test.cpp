// NET/Socket (models::Net::socket): host memory only, one stream per connection at
// Params::net_socket.stream_bandwidth, each step dearer by net_socket.step_extra.
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

topo::LinkGraph two_nodes() {
  return topo::load_topology(std::string(WIRESIM_SOURCE_DIR) + "/topologies/cluster-h100-ib.yaml", {{"nodes", "2"}});
}

}  // namespace

TEST_CASE("NET/Socket: no GPUDirect RDMA, named as such; the same pair is NET with GDR over IB") {
  const topo::LinkGraph g = two_nodes();
  const Machine ib(g, default_params());
  const Machine socket(g, default_params(), {.net = Net::socket});
  const auto a = g.gpus()[0], b = g.gpus()[8];
  CHECK(ib.exchange(a, b).name() == "NET");
  CHECK(socket.exchange(a, b).name() == "NET/Socket");
  CHECK(socket.exchange(a, b).via_host);
  for (auto nic : socket.router().nearest_nics(a)) CHECK_FALSE(socket.gdr(a, nic));
  // Inside a node nothing changes.
  CHECK(socket.exchange(g.gpus()[0], g.gpus()[1]).name() == "P2P/NVLink");
  CHECK(socket.stream_cap(g.gpus()[0], g.gpus()[1]).is_unlimited());
  CHECK(socket.stream_cap(a, b).count() == rel_approx(default_params().net_socket.stream_bandwidth.count()));
}

TEST_CASE("NET/Socket ring all_reduce across 2 nodes: bound by one stream per channel and direction") {
  // Each of C ring channels crosses the node boundary once each way over one connection, and
  // a node sends 2(n-1)/n x S in all: t >= 2(n-1)/n x S / (C x stream rate). Nothing else
  // comes close (NICs: 8 x 50 GB/s), so the ring runs near that bound; over IB it is far faster.
  const topo::LinkGraph g = two_nodes();
  const Params& params = default_params();
  const Machine socket(g, params, {.net = Net::socket});
  const Machine ib(g, params);
  const double size = 1024.0 * 1024 * 1024, n = 16;
  const int channels = 24;
  const Problem p(Collective::all_reduce, sim::Bytes{size}, g.gpus());
  const Choice c{Algorithm::ring, Protocol::simple, channels};
  const double t_socket = run_collective(socket, p, c, Method::simulate).time.count();
  const double t_ib = run_collective(ib, p, c, Method::simulate).time.count();
  const double bound = 2 * (n - 1) / n * size / (channels * params.net_socket.stream_bandwidth.count());
  CHECK(t_socket >= bound);
  CHECK(t_socket <= 1.1 * bound);
  CHECK(t_socket >= 5 * t_ib);
  // The closed form knows the same cap.
  const double closed = run_collective(socket, p, c, Method::analytic).time.count();
  CHECK(closed == rel_approx(t_socket).epsilon(0.05));
}

TEST_CASE("NET/Socket: a one-hop 8 B broadcast pays the socket's step extra once") {
  const topo::LinkGraph g = two_nodes();
  const Params& params = default_params();
  const Machine socket(g, params, {.net = Net::socket});
  const Machine ib(g, params);
  const Problem p(Collective::broadcast, sim::Bytes{8}, {g.gpus()[0], g.gpus()[8]});
  const Choice c{Algorithm::ring, Protocol::ll, 1};
  const double extra = run_collective(socket, p, c, Method::simulate).time.count() -
                       run_collective(ib, p, c, Method::simulate).time.count();
  CHECK(extra == rel_approx(params.net_socket.step_extra.count()).epsilon(0.02));
}
