#include "input/collective.h"

#include <cmath>
#include <string>

#include "input/keys.h"

namespace wiresim::input {
namespace {

// How busbw relates to algbw: scale × (n−1)/n where per_peer, else scale.
struct BusFactor {
  double scale;
  bool per_peer;
  std::string_view formula;
};

struct Info {
  Collective op;
  std::string_view name;
  std::string_view nccl_tests;
  BusFactor bus;
  bool reduces, rooted, splits;
};

constexpr BusFactor kTwicePerPeer{2.0, true, "2(n-1)/n"}, kPerPeer{1.0, true, "(n-1)/n"}, kOne{1.0, false, "1"};

constexpr std::array<Info, 7> kTable{{
    //  op                        name              nccl-tests        bus factor    reduces rooted splits
    {Collective::all_reduce,     "all_reduce",     "all_reduce",     kTwicePerPeer, true,  false, false},
    {Collective::all_gather,     "all_gather",     "all_gather",     kPerPeer,      false, false, true},
    {Collective::reduce_scatter, "reduce_scatter", "reduce_scatter", kPerPeer,      true,  false, true},
    {Collective::all_to_all,     "all_to_all",     "alltoall",       kPerPeer,      false, false, true},
    {Collective::broadcast,      "broadcast",      "broadcast",      kOne,          false, true,  false},
    {Collective::reduce,         "reduce",         "reduce",         kOne,          true,  true,  false},
    {Collective::send_recv,      "send_recv",      "sendrecv",       kOne,          false, false, false},
}};

const Info& info(Collective op) { return kTable[static_cast<std::size_t>(op)]; }

}  // namespace

std::string_view to_string(Collective op) { return info(op).name; }
std::string_view nccl_tests_name(Collective op) { return info(op).nccl_tests; }

std::optional<Collective> parse_collective(std::string_view name) {
  const std::string key = loose_name(name);
  for (const Info& i : kTable)
    if (loose_name(i.name) == key) return i.op;
  return std::nullopt;
}

std::vector<Collective> all_collectives() { return {kCollectives.begin(), kCollectives.end()}; }

double bus_factor(Collective op, int ranks) {
  const BusFactor& b = info(op).bus;
  const double n = ranks;
  return b.per_peer ? b.scale * (n - 1.0) / n : b.scale;
}

std::string_view bus_factor_formula(Collective op) { return info(op).bus.formula; }
bool reduces(Collective op) { return info(op).reduces; }
bool rooted(Collective op) { return info(op).rooted; }
bool splits_per_rank(Collective op) { return info(op).splits; }

sim::Bytes nccl_tests_size(Collective op, sim::Bytes requested, int element, int ranks) {
  const double align = splits_per_rank(op) ? static_cast<double>(element) * ranks : element;
  return sim::Bytes{std::floor(requested.count() / align) * align};
}

long long nccl_tests_count(Collective op, sim::Bytes size, int element, int ranks) {
  return static_cast<long long>(size.count() / element / (splits_per_rank(op) ? ranks : 1));
}

}  // namespace wiresim::input
