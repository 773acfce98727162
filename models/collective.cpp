#include "models/collective.h"

#include <cmath>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "models/algorithm.h"

namespace wiresim::models {
namespace {

// Lower case with '_' and '-' removed, so "AllReduce", "all_reduce" and "allreduce" agree.
std::string squash(std::string_view s) {
  std::string out;
  for (char ch : s)
    if (ch != '_' && ch != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  if (out.size() > 4 && out.ends_with("perf")) out.resize(out.size() - 4);
  return out;
}

template <typename E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view s) {
  const std::string key = squash(s);
  for (const auto& [name, value] : table)
    if (squash(name) == key) return value;
  return std::nullopt;
}

constexpr std::array<std::pair<std::string_view, Collective>, 8> kCollectives{{
    {"all_reduce", Collective::all_reduce},   {"all_gather", Collective::all_gather},
    {"reduce_scatter", Collective::reduce_scatter}, {"all_to_all", Collective::all_to_all},
    {"broadcast", Collective::broadcast},     {"reduce", Collective::reduce},
    {"send_recv", Collective::send_recv},     {"sendrecv", Collective::send_recv}}};

constexpr std::array<std::pair<std::string_view, Protocol>, 3> kProtocols{{
    {"ll", Protocol::ll}, {"ll128", Protocol::ll128}, {"simple", Protocol::simple}}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<std::string_view, E>, N>& table, E value) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return "?";
}

}  // namespace

std::string_view to_string(Collective c) { return name_of(kCollectives, c); }
std::string_view to_string(Algorithm a) { return descriptor(a).name; }
std::string_view to_string(Protocol p) { return name_of(kProtocols, p); }
std::optional<Collective> parse_collective(std::string_view s) { return lookup(kCollectives, s); }
std::optional<Algorithm> parse_algorithm(std::string_view s) {
  const std::string key = squash(s);
  for (const AlgorithmDescriptor* d : algorithms())
    if (squash(d->name) == key) return d->id;
  return std::nullopt;
}
std::optional<Protocol> parse_protocol(std::string_view s) { return lookup(kProtocols, s); }

std::vector<Collective> all_collectives() {
  return {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
          Collective::all_to_all, Collective::broadcast,  Collective::reduce,
          Collective::send_recv};
}
std::vector<Algorithm> all_algorithms() {
  std::vector<Algorithm> out;
  for (const AlgorithmDescriptor* d : algorithms()) out.push_back(d->id);
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<Protocol> all_protocols() { return {Protocol::ll, Protocol::ll128, Protocol::simple}; }

bool splits_per_rank(Collective c) {
  return c == Collective::all_gather || c == Collective::reduce_scatter || c == Collective::all_to_all;
}

sim::Bytes nccl_tests_size(Collective c, sim::Bytes requested, int element, int ranks) {
  const double align = splits_per_rank(c) ? static_cast<double>(element) * ranks : element;
  return sim::Bytes{std::floor(requested.count() / align) * align};
}

long long nccl_tests_count(Collective c, sim::Bytes size, int element, int ranks) {
  return static_cast<long long>(size.count() / element / (splits_per_rank(c) ? ranks : 1));
}

double bus_factor(Collective c, int ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::all_reduce: return 2.0 * (n - 1.0) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return (n - 1.0) / n;
    default: return 1.0;
  }
}

bool reduces(Collective c) {
  return c == Collective::all_reduce || c == Collective::reduce_scatter || c == Collective::reduce;
}

}  // namespace wiresim::models
