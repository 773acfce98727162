// The mechanisms behind the latency floor and the bandwidth ramp, each by hand: NCCL's
// channel count by size, a channel's NVLink throughput, the per-send channel overhead, and the
// floor a host thread launching for several GPUs puts under back-to-back collectives.
#include <doctest/doctest.h>

#include "models/alpha_beta.h"
#include "models/machine.h"
#include "models/run.h"
#include "models/tuner.h"
#include "test_machines.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

constexpr double kRate = 400e9;   // B/s per direction

Problem problem_of(const topo::LinkGraph& g, int n, double bytes) {
  std::vector<topo::DeviceId> ranks(g.gpus().begin(), g.gpus().begin() + n);
  return Problem{Collective::all_reduce, sim::Bytes{bytes}, ranks, 0};
}

// An all_to_all of every GPU of `g` whose piece from i to j is bytes(i, j, r) (0 on the
// diagonal), r drawn from a fixed linear congruential sequence started at `seed`; the
// problem's size is the mean bytes a rank sends, as nccl-tests counts it.
template <typename Bytes>
Problem traffic_matrix(const topo::LinkGraph& g, std::uint32_t seed, Bytes bytes) {
  const int n = static_cast<int>(g.gpus().size());
  Problem p{Collective::all_to_all, sim::Bytes{0.0}, g.gpus(), 0};
  p.matrix.assign(static_cast<std::size_t>(n) * n, 0.0);
  double total = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      seed = seed * 1664525u + 1013904223u;
      if (i == j) continue;
      const double b = bytes(i, j, seed >> 16);
      p.matrix[static_cast<std::size_t>(i) * n + j] = b;
      total += b;
    }
  p.size = sim::Bytes{total / n};
  return p;
}

// The longest any GPU of `g` needs to send its row of `p.matrix` over all its out-links at once.
double send_bound(const Machine& m, const topo::LinkGraph& g, const Problem& p) {
  const int n = static_cast<int>(g.gpus().size());
  double bound = 0.0;
  for (int i = 0; i < n; ++i) {
    double out = 0.0, bytes = 0.0;
    for (auto l : g.out_links(g.gpus()[static_cast<std::size_t>(i)])) out += m.links()[l].capacity.count();
    for (int j = 0; j < n; ++j) bytes += p.matrix[static_cast<std::size_t>(i) * n + j];
    bound = std::max(bound, bytes / out);
  }
  return bound;
}

}  // namespace

TEST_CASE("NCCL's channel count by size: channels x threads x threshold bytes at least") {
  const topo::LinkGraph g = testing::crossbar(8, sim::BytesPerSec{kRate});
  // Ring LL, 8 ranks: threshold 8 x 8 = 64 B per thread, 512 threads: 32 KiB per channel.
  CHECK(channels_for_size(problem_of(g, 8, 65536), Algorithm::ring, Protocol::ll, 24) == 2);
  CHECK(channels_for_size(problem_of(g, 8, 65535), Algorithm::ring, Protocol::ll, 24) == 1);
  CHECK(channels_for_size(problem_of(g, 8, 8), Algorithm::ring, Protocol::ll, 24) == 1);
  // Ring Simple: 64 B x 512 threads = 32 KiB per channel: 24 channels from 768 KiB.
  CHECK(channels_for_size(problem_of(g, 8, 768 * 1024), Algorithm::ring, Protocol::simple, 24) == 24);
  CHECK(channels_for_size(problem_of(g, 8, 768 * 1024 - 1), Algorithm::ring, Protocol::simple, 24) == 23);
  // LL128: 8 B x 640 threads = 5 KiB per channel; tree LL does not scale with the ranks.
  CHECK(channels_for_size(problem_of(g, 8, 10 * 5120), Algorithm::ring, Protocol::ll128, 24) == 10);
  CHECK(channels_for_size(problem_of(g, 8, 4096 * 3), Algorithm::tree, Protocol::ll, 24) == 3);
  // NVLS and point-to-point keep their channels.
  CHECK(channels_for_size(problem_of(g, 8, 8), Algorithm::nvls, Protocol::simple, 16) == 16);
}

TEST_CASE("one channel moves at most channel_bw over NVLink: --channels 1 on HGX H100 is far below the default") {
  // Issue 12's check: ring/Simple all_reduce at 256 MiB on HGX H100. One channel is one
  // thread block; NCCL never gives a Hopper channel more than 30 GB/s (the fastest speed of
  // its intra-node search, 60 GB/s, over the two execution channels of a search channel).
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  const Problem p{Collective::all_reduce, sim::Bytes{256.0 * (1 << 20)}, g.gpus(), 0};
  TunerOptions one;
  one.algorithm = Algorithm::ring;
  one.protocol = Protocol::simple;
  one.channels = 1;
  TunerOptions all = one;
  all.channels.reset();
  const Outcome single = run_collective(m, p, tune(m, p, one).best, Method::simulate);
  const Outcome full = run_collective(m, p, tune(m, p, all).best, Method::simulate);
  CHECK(tune(m, p, all).best.channels == 24);
  // A ring's busbw is what each link carries: at most one channel's 30 GB/s.
  CHECK(single.busbw_GBps <= 30.0);
  CHECK(single.busbw_GBps > 25.0);
  CHECK(single.busbw_GBps <= 0.5 * full.busbw_GBps);
}

TEST_CASE("each send pays the protocol's overhead before its bytes: a one-loop ring pays it 2(n-1) times") {
  const topo::LinkGraph g = testing::crossbar(2, sim::BytesPerSec{kRate});
  Params params = testing::plain_params(true);
  const Problem p = problem_of(g, 2, 1 << 20);   // one loop: 2(n-1) = 2 chained steps
  const Choice c{Algorithm::ring, Protocol::simple, 1};
  const Machine plain(g, params);
  const double base = run_collective(plain, p, c, Method::simulate).time.count();
  params.protocols[static_cast<int>(Protocol::simple)].overhead = sim::Seconds{5e-6};
  const Machine slow(g, params);
  CHECK(run_collective(slow, p, c, Method::simulate).time.count() == rel_approx(base + 2 * 5e-6).epsilon(1e-9));
  CHECK(run_collective(slow, p, c, Method::analytic).time.count() == rel_approx(base + 2 * 5e-6).epsilon(1e-9));
}

TEST_CASE("a thread that launches for 8 GPUs floors back-to-back collectives at 8 x host_launch") {
  const topo::LinkGraph g = testing::crossbar(8, sim::BytesPerSec{kRate});
  Params params = testing::plain_params(true);
  params.host_launch = sim::Seconds{4e-6};
  const Machine m(g, params);
  Problem p = problem_of(g, 8, 8);
  const Choice c{Algorithm::ring, Protocol::ll, 1};
  // With no latencies an 8-byte all_reduce costs nothing on the GPUs: the host is the floor.
  CHECK(run_collective(m, p, c, Method::simulate).time.count() == rel_approx(4e-6));
  p.gpus_per_thread = 8;
  CHECK(run_collective(m, p, c, Method::simulate).time.count() == rel_approx(32e-6));
  CHECK(run_collective(m, p, c, Method::analytic).time.count() == rel_approx(32e-6));
  // A big collective is not floored: the GPUs take longer than the launches.
  p.size = sim::Bytes{1e9};
  CHECK(run_collective(m, p, c, Method::simulate).time.count() > 1e-3);
}

TEST_CASE("NCCL's P2P channels for one send on HGX H100: 4 up to 64 MiB, doubling per 16 MiB part beyond") {
  // 24 ring channels -> 32 P2P channels; a peer over NV18 may use 2 x 18 -> 32; 8 ranks start
  // on 32 / 8 = 4; one node: parts from 64 KiB (512 KiB / 8) to 16 MiB (512 KiB x 32).
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  Problem p{Collective::send_recv, sim::Bytes{1}, g.gpus(), 0};
  const auto channels = [&](double mib) { return p2p_channels(m, p, sim::Bytes{mib * (1 << 20)}); };
  CHECK(p2p_channels(m, p, sim::Bytes{8}) == 1);
  CHECK(p2p_channels(m, p, sim::Bytes{128 * 1024}) == 2);
  CHECK(channels(1) == 4);
  CHECK(channels(64) == 4);
  CHECK(channels(128) == 8);
  CHECK(channels(256) == 16);
  CHECK(channels(512) == 32);
  CHECK(channels(4096) == 32);
  // The measured step (xxrjun sendrecv, 8 H100s: ~80 GB/s to 64 MiB, 299 at 256 MiB) follows.
  TunerOptions o;
  p.size = sim::Bytes{64.0 * (1 << 20)};
  const double at64 = run_collective(m, p, tune(m, p, o).best, Method::simulate).busbw_GBps;
  p.size = sim::Bytes{256.0 * (1 << 20)};
  const double at256 = run_collective(m, p, tune(m, p, o).best, Method::simulate).busbw_GBps;
  CHECK(at256 > 3.0 * at64);
}

TEST_CASE("NCCL's point-to-point across nodes: Simple (with net LL buffers, LL to 16 KiB a channel), 4 channels per 400G NIC, the NIC the bound") {
  // src/enqueue.cc addP2pToPlan: the protocol is not tuned; src/graph/paths.cc (NCCL >= 2.29):
  // a peer on another node gets max(1 NIC, divUp(50 GB/s, 14)) = 4 channels; before, 2.
  const topo::LinkGraph g = topo::load_topology(testing::shipped("cluster-b200-ib.yaml"));   // 2 nodes
  const Machine m(g, default_params());
  Problem p{Collective::send_recv, sim::Bytes{256.0 * (1 << 20)}, g.gpus(), 0};
  CHECK(p2p_channels(m, p, p.size) == 4);
  Params older = default_params();
  for (auto& entry : older.architectures) entry.second.p2p_net_channel_bw = sim::BytesPerSec::unlimited();
  CHECK(p2p_channels(Machine(g, older), p, p.size) == 2);
  // Never LL128. With LL buffers for the network (p2p_net_ll), 16 KiB on one channel is LL and
  // 64 KiB (still one channel: parts from 64 KiB) Simple; without (NCCL's default), both Simple.
  CHECK(why_not(m, p, Algorithm::direct, Protocol::ll128).has_value());
  Params net_ll = default_params();
  net_ll.p2p_net_ll = true;
  const Machine ml(g, net_ll);
  for (double kib : {16.0, 64.0}) {
    p.size = sim::Bytes{kib * 1024};
    CAPTURE(kib);
    CHECK(p2p_channels(ml, p, p.size) == 1);
    const Protocol expected = kib <= 16.0 ? Protocol::ll : Protocol::simple;
    CHECK(tune(ml, p, TunerOptions{}).best.protocol == expected);
    CHECK(why_not(ml, p, Algorithm::direct, expected == Protocol::ll ? Protocol::simple : Protocol::ll).has_value());
    CHECK(tune(m, p, TunerOptions{}).best.protocol == Protocol::simple);
  }
  // 256 MiB: the GPUs post 128 KiB chunks every overhead and the proxy's NIC moves them, so the
  // two ranks that cross nodes run at their NIC's rate (400 Gb/s x 0.96 = 48 GB/s), not at
  // chunk / (overhead + chunk / rate) per channel; the closed form follows the same chain.
  p.size = sim::Bytes{256.0 * (1 << 20)};
  const Choice c = tune(m, p, TunerOptions{}).best;
  CHECK(c.protocol == Protocol::simple);
  const auto sim_run = run_collective(m, p, c, Method::simulate);
  const double nic = 50e9 * m.arch().efficiency(topo::Tier::ib) / 1e9;
  CHECK(sim_run.busbw_GBps <= nic * 1.0001);
  CHECK(sim_run.busbw_GBps >= 0.97 * nic);
  CHECK(run_collective(m, p, c, Method::analytic).time.count() == rel_approx(sim_run.time.count()).epsilon(0.005));
}

TEST_CASE("a channel's chunks to another node leave its NIC in order: less per-send overhead is never slower") {
  // One connection per channel and peer: the proxy posts its chunks and the NIC moves them in
  // turn, so a chunk's bytes go on the wire after the one before it. Run as 8 flows sharing the
  // links (the slots), a window's chunks all started and finished together and the NIC idled one
  // network step per window once the overhead no longer staggered them (2 H100 nodes, 1 GiB:
  // 11,417 us at 0 us against 11,209 at 2 us).
  const topo::LinkGraph g = testing::cluster("cluster-h100-ib.yaml", 2);
  const Problem p{Collective::all_to_all, sim::Bytes{1024.0 * (1 << 20)}, g.gpus(), 0};
  double before = 0.0;
  for (double overhead_us : {0.0, 2.0, 4.1}) {
    CAPTURE(overhead_us);
    Params params = default_params();
    params.protocols[static_cast<int>(Protocol::simple)].overhead = sim::Seconds{overhead_us * 1e-6};
    const Machine m(g, params);
    const Choice c = tune(m, p, TunerOptions{}).best;
    REQUIRE(c.algorithm == Algorithm::direct);
    REQUIRE(c.protocol == Protocol::simple);
    const double t = run_collective(m, p, c, Method::simulate).time.count();
    CHECK(t >= before);
    before = t;
    // Half of each rank's bytes cross nodes on its rail's NIC (400 Gb/s x 0.96): within 0.5 %
    // of that bound, and never under it.
    const double bound = 0.5 * p.size.count() / (50e9 * m.arch().efficiency(topo::Tier::ib));
    CHECK(t >= bound);
    CHECK(t <= 1.005 * bound);
  }
}

TEST_CASE("an all_to_all's protocol is the rule's for its largest piece: size / n, or the matrix's largest entry") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-b200.yaml"));   // one node, 8 GPUs
  const Machine m(g, default_params());
  const int n = static_cast<int>(g.gpus().size());
  Problem p{Collective::all_to_all, sim::Bytes{n * 8.0 * 1024}, g.gpus(), 0};   // 8 KiB to each peer
  CHECK(p2p_largest_send(p).count() == rel_approx(8.0 * 1024));
  CHECK(p2p_protocol(m, p, p2p_largest_send(p)) == Protocol::ll);
  CHECK(tune(m, p, TunerOptions{}).best.protocol == Protocol::ll);
  // 1 KiB to each peer, but rank 3 sends 1 MiB to rank 6: Simple for the whole operation, and the
  // shape's overload agrees with the machine's.
  p.matrix.assign(static_cast<std::size_t>(n * n), 1024.0);
  p.matrix[3 * n + 6] = 1024.0 * 1024;
  CHECK(p2p_largest_send(p).count() == rel_approx(1024.0 * 1024));
  CHECK(p2p_protocol(p2p_shape(m, p), p2p_largest_send(p)) == Protocol::simple);
  CHECK(tune(m, p, TunerOptions{}).best.protocol == Protocol::simple);
  CHECK(why_not(m, p, Algorithm::direct, Protocol::ll).has_value());
  p.op = Collective::send_recv;
  CHECK(p2p_largest_send(p).count() == rel_approx(p.size.count()));
}

TEST_CASE("point to point across nodes runs Simple at every size: NCCL allocates no LL buffers for the network") {
  // src/transport/net.cc: the net transport's P2P connections get LL buffers only with
  // NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (src/init.cc, default 0); addP2pToPlan takes LL only where
  // every connection has them.
  const topo::LinkGraph g = topo::load_topology(testing::shipped("cluster-b200-ib.yaml"));   // 2 nodes, 16 GPUs
  const Machine m(g, default_params());
  const int n = static_cast<int>(g.gpus().size());
  Problem p{Collective::all_to_all, sim::Bytes{n * 1024.0}, g.gpus(), 0};   // 1 KiB to each peer
  CHECK_FALSE(p2p_shape(m, p).ll);
  CHECK(p2p_protocol(m, p, p2p_largest_send(p)) == Protocol::simple);
  CHECK(tune(m, p, TunerOptions{}).best.protocol == Protocol::simple);
  const auto why = why_not(m, p, Algorithm::direct, Protocol::ll);
  REQUIRE(why.has_value());
  CHECK(why->find("NCCL_ALLOC_P2P_NET_LL_BUFFERS") != std::string::npos);
  p.op = Collective::send_recv;
  CHECK(tune(m, p, TunerOptions{}).best.protocol == Protocol::simple);
  // With NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (p2p_net_ll) the rule's threshold applies again.
  Params with_ll = default_params();
  with_ll.p2p_net_ll = true;
  const Machine ml(g, with_ll);
  CHECK(p2p_shape(ml, p).ll);
  CHECK(tune(ml, p, TunerOptions{}).best.protocol == Protocol::ll);
  CHECK(run_collective(ml, p, tune(ml, p, TunerOptions{}).best, Method::simulate).time <
        run_collective(m, p, tune(m, p, TunerOptions{}).best, Method::simulate).time);
  // The same 1 KiB between two GPUs of one node keeps LL; so does a rack's NVLink domain,
  // which is one node (trays on NVLink, not the network).
  Problem local{Collective::send_recv, sim::Bytes{1024.0}, {g.gpus()[0], g.gpus()[1]}, 0};
  CHECK(tune(m, local, TunerOptions{}).best.protocol == Protocol::ll);
  const topo::LinkGraph rack = topo::load_topology(testing::shipped("gb200-nvl72.yaml"));
  const Machine r(rack, default_params());
  Problem trays{Collective::send_recv, sim::Bytes{1024.0}, {rack.gpus()[0], rack.gpus()[40]}, 0};
  CHECK(p2p_shape(r, trays).ll);
  CHECK(tune(r, trays, TunerOptions{}).best.protocol == Protocol::ll);
}

TEST_CASE("LL's cap across nodes is NCCL's llMaxBws row of the hosts' CPU vendor, not the GPU's") {
  // src/graph/tuning.cc ncclTopoTuneModel (RCCL the same): index1 = nNodes == 1 ? compCapIndex
  // : (cpuVendor == AMD or MIXED) ? 1 : 0, so {39, 20.4} GB/s for Intel, Arm and POWER hosts
  // and {22.5, 19} for AMD hosts at 2 and more nodes, whatever the GPU.
  const auto ranks_of = [](const topo::LinkGraph& g, int gpus) {
    return Problem{Collective::all_reduce, sim::Bytes{256.0 * 1024 * 1024},
                   std::vector<topo::DeviceId>(g.gpus().begin(), g.gpus().begin() + gpus), 0};
  };
  const topo::LinkGraph b2 = topo::load_topology(testing::shipped("cluster-b200-ib.yaml"), {{"nodes", "2"}});
  const topo::LinkGraph b4 = topo::load_topology(testing::shipped("cluster-b200-ib.yaml"), {{"nodes", "4"}});
  const Machine mb2(b2, default_params()), mb4(b4, default_params());
  CHECK(ll_cap(mb2, ranks_of(b2, 8)).count() == rel_approx(282e9));   // one node: Blackwell's own
  CHECK(ll_cap(mb2, ranks_of(b2, 16)).count() == rel_approx(39e9));    // Xeon hosts, 2 nodes
  CHECK(ll_cap(mb4, ranks_of(b4, 32)).count() == rel_approx(20.4e9));  // 4 nodes
  const topo::LinkGraph a2 = topo::load_topology(testing::shipped("cluster-mi300x-roce.yaml"), {{"nodes", "2"}});
  const topo::LinkGraph a4 = topo::load_topology(testing::shipped("cluster-mi300x-roce.yaml"), {{"nodes", "4"}});
  const Machine ma2(a2, default_params()), ma4(a4, default_params());
  CHECK(ll_cap(ma2, ranks_of(a2, 16)).count() == rel_approx(22.5e9));  // EPYC hosts
  CHECK(ll_cap(ma4, ranks_of(a4, 32)).count() == rel_approx(19e9));
  const topo::LinkGraph racks = topo::load_topology(testing::shipped("gb200-nvl72-ib.yaml"), {{"racks", "2"}});
  const Machine mr(racks, default_params());
  CHECK(ll_cap(mr, ranks_of(racks, 144)).count() == rel_approx(39e9));  // Grace: NCCL's vendor undefined
  // The simulation honours the cap: a 256 MiB ring all_reduce with LL on 2 B200 nodes moves each
  // GPU's 2(n-1)/n x S at 39 GB/s at most, and within 10 % of that (the pipeline's fill and the
  // NICs, which carry LL's doubled bytes, take the rest).
  TunerOptions ll;
  ll.algorithm = Algorithm::ring;
  ll.protocol = Protocol::ll;
  const Problem p = ranks_of(b2, 16);
  const double bound = 2.0 * 15.0 / 16.0 * p.size.count() / 39e9;
  const double t = run_collective(mb2, p, tune(mb2, p, ll).best, Method::simulate).time.count();
  CHECK(t >= bound);
  CHECK(t <= 1.1 * bound);
  // Under the Blackwell row's 90 GB/s that wiresim read before, the same run takes less than half.
  Params wide = default_params();
  wide.ll_max_net.other = {sim::BytesPerSec{90e9}, sim::BytesPerSec{70e9}};
  const Machine mw(b2, wide);
  CHECK(run_collective(mw, p, tune(mw, p, ll).best, Method::simulate).time.count() < t / 2.0);
}

TEST_CASE("an all_to_all piece moves as NCCL's P2P chains: every chunk of every channel pays the per-send overhead") {
  // HGX H100, 1 GiB: each of the 7 pieces a GPU sends is 128 MiB, on 8 P2P channels of 16 MiB,
  // each a chain of 32 chunks of 512 KiB. The chains of a group run in lock step, so the GPU's
  // port is idle while they pay their overheads: the time is at least 32 overheads plus the
  // port's 7 x 128 MiB at its payload rate. Moving each piece as one transfer (as wiresim did
  // before) misses the 32 overheads (131 us of ~2.7 ms).
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  Problem p{Collective::all_to_all, sim::Bytes{1024.0 * (1 << 20)}, g.gpus(), 0};
  const auto shape = p2p_shape(m, p);
  const sim::Bytes piece = p.size / 8.0;
  REQUIRE(p2p_channels(shape, piece) == 8);
  const sim::Bytes chunk = p2p_chunk(m.params(), shape, Protocol::simple, piece, false);
  CHECK(chunk.count() == 512.0 * 1024);
  const int loops = chunk_count(piece / 8.0, chunk);
  CHECK(loops == 32);
  double port = 0.0;
  for (auto l : g.out_links(g.gpus().front()))
    port = std::max(port, g.link(l).bandwidth.count() * m.arch().efficiency(g.link(l).tier));
  const Choice c = tune(m, p, TunerOptions{}).best;
  REQUIRE(c.algorithm == Algorithm::direct);
  REQUIRE(c.protocol == Protocol::simple);
  const double overhead = m.params().protocol(Protocol::simple).overhead.count();
  const auto sim_run = run_collective(m, p, c, Method::simulate);
  CHECK(sim_run.time.count() >= loops * overhead + 7.0 * piece.count() / port);
  // and the closed form plays the same chains
  CHECK(run_collective(m, p, c, Method::analytic).time.count() == rel_approx(sim_run.time.count()).epsilon(0.001));
}

TEST_CASE("NCCL cuts the P2P chunk only for sends that cross nodes; in-node peers keep the whole step") {
  // src/enqueue.cc addP2pToPlan: chunk = p2pChunkSize (128 KiB once the communicator spans
  // nodes), divided by 4 for a Simple send under one step and by 2 under eight, where the
  // peer is reached through the net transport only.
  const topo::LinkGraph g = topo::load_topology(testing::shipped("cluster-b200-ib.yaml"));   // 2 nodes
  const Machine m(g, default_params());
  Problem p{Collective::all_to_all, sim::Bytes{16.0 * (1 << 20)}, g.gpus(), 0};
  const auto shape = p2p_shape(m, p);
  const double step = 128.0 * 1024;
  REQUIRE(shape.step == step);
  for (double bytes : {64.0 * 1024, 512.0 * 1024, 4.0 * (1 << 20)}) {
    CAPTURE(bytes);
    const sim::Bytes b{bytes};
    CHECK(p2p_chunk(m.params(), shape, Protocol::simple, b, false).count() == step);
    const double net = bytes < step ? step / 4 : bytes < 8 * step ? step / 2 : step;
    CHECK(p2p_chunk(m.params(), shape, Protocol::simple, b, true).count() == net);
  }
  // A 1 MiB piece to a peer in the node: 8 chunks of 128 KiB on its channel; to a peer on the
  // other node, 16 of 64 KiB. The simulation of a whole all_to_all equals the closed form.
  const Choice c = tune(m, p, TunerOptions{}).best;
  REQUIRE(c.algorithm == Algorithm::direct);
  const auto sim_run = run_collective(m, p, c, Method::simulate);
  CHECK(run_collective(m, p, c, Method::analytic).time.count() == rel_approx(sim_run.time.count()).epsilon(0.001));
}

TEST_CASE("an all_to_all of a skewed traffic matrix: the closed form re-shares the links as sends end, as the simulation does") {
  // Pairs send 256 KiB to 4 MiB, and rank 0 sends its last peer 64 MiB (a hot expert). Sharing
  // the links as if every send ran to the end (the closed form before) is slow by the time the
  // hot send spends sharing its port with sends that are long done.
  for (const char* name : {"hgx-h100.yaml", "cluster-b200-ib.yaml"}) {
    CAPTURE(name);
    const topo::LinkGraph g = topo::load_topology(testing::shipped(name));
    const Machine m(g, default_params());
    // Pseudo-random pieces with the hot pair.
    const int n = static_cast<int>(g.gpus().size());
    const Problem p = traffic_matrix(g, 12345, [n](int i, int j, std::uint32_t r) {
      return (i == 0 && j == n - 1 ? 64.0 : 0.25 * (1 + r % 16)) * (1 << 20);
    });
    const Choice c = tune(m, p, TunerOptions{}).best;
    REQUIRE(c.algorithm == Algorithm::direct);
    const auto sim_run = run_collective(m, p, c, Method::simulate);
    const double cf_time = run_collective(m, p, c, Method::analytic).time.count();
    CHECK(cf_time == rel_approx(sim_run.time.count()).epsilon(0.01));
    // Conservation: no GPU sends faster than all its links together.
    const double bound = send_bound(m, g, p);
    CHECK(sim_run.time.count() >= bound);
  }
}

TEST_CASE("pairwise's closed form plays each rank's steps: a rank whose send is quick runs ahead, as in the simulation") {
  // On 2 B200 nodes a step's sends within a node end long before those that cross: adding the
  // steps' slowest sends up was 20-22 % slow at 8-32 KiB. One node: exact as before. (From
  // 32 MiB on, the simulation is 17-23 % slower than the form: ranks in different steps share
  // NICs, which the form does not see; docs/models.md.)
  for (const char* name : {"hgx-h100.yaml", "cluster-b200-ib.yaml"}) {
    const topo::LinkGraph g = topo::load_topology(testing::shipped(name));
    const Machine m(g, default_params());
    const bool one_node = g.gpus().size() == 8;
    for (double kib : {8.0, 32.0, 16384.0}) {
      if (!one_node && kib > 32.0) continue;
      CAPTURE(name);
      CAPTURE(kib);
      const Problem p{Collective::all_to_all, sim::Bytes{kib * 1024}, g.gpus(), 0};
      TunerOptions o;
      o.algorithm = Algorithm::pairwise;
      const Choice c = tune(m, p, o).best;
      const auto [closed, sim] = testing::closed_and_simulated(m, p, c);
      CHECK(closed == rel_approx(sim).epsilon(0.01));
    }
  }
}

TEST_CASE("pairwise with a traffic matrix: each rank's steps carry its own bytes, closed form as simulated") {
  // Pieces of 1-24 MB (a fixed pseudo-random sequence). In one node every step's sends share
  // nothing across steps, so the closed form plays exactly what the simulation does. Across
  // nodes a rank that runs ahead meets another rank's later step on a NIC, which the form does
  // not see: there it can only be fast, never slow (this matrix on 2 B200 nodes: 5,456 vs
  // 7,718 us, -29 %; docs/models.md).
  for (const std::string name : {"hgx-h100.yaml", "cluster-b200-ib.yaml"}) {
    CAPTURE(name);
    const topo::LinkGraph g = topo::load_topology(testing::shipped(name));
    const Machine m(g, default_params());
    const Problem p = traffic_matrix(g, 777, [](int, int, std::uint32_t r) { return 1e6 * (1 + r % 24); });
    TunerOptions o;
    o.algorithm = Algorithm::pairwise;
    const Choice c = tune(m, p, o).best;
    const auto [closed, sim] = testing::closed_and_simulated(m, p, c);
    if (g.gpus().size() == 8) {
      CHECK(closed == rel_approx(sim).epsilon(0.001));
    } else {
      CHECK(closed <= sim * 1.001);
      MESSAGE("pairwise, traffic matrix, " << name << ": closed form " << closed * 1e6 << " us, simulated " << sim * 1e6
                                           << " us");
    }
    // The steps run one after another on each rank: no rank is done before its own bytes have
    // left over all its links together.
    CHECK(sim >= send_bound(m, g, p));
  }
}
