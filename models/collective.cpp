#include "models/collective.h"

#include <array>
#include <utility>

#include "input/keys.h"

namespace wiresim::models {
namespace {

template <typename E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view s) {
  const std::string key = input::loose_name(s);
  for (const auto& [name, value] : table)
    if (input::loose_name(name) == key) return value;
  return std::nullopt;
}

constexpr std::array<std::pair<std::string_view, Algorithm>, 9> kAlgorithms{{
    {"ring", Algorithm::ring},         {"tree", Algorithm::tree},
    {"nvls", Algorithm::nvls},         {"nvls_tree", Algorithm::nvls_tree},
    {"one_shot", Algorithm::one_shot}, {"two_shot", Algorithm::two_shot},
    {"hierarchical", Algorithm::hierarchical}, {"pairwise", Algorithm::pairwise},
    {"direct", Algorithm::direct}}};

constexpr std::array<std::pair<std::string_view, Protocol>, 3> kProtocols{{
    {"ll", Protocol::ll}, {"ll128", Protocol::ll128}, {"simple", Protocol::simple}}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<std::string_view, E>, N>& table, E value) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return "?";
}

}  // namespace

std::string_view to_string(Algorithm a) { return name_of(kAlgorithms, a); }
std::string_view to_string(Protocol p) { return name_of(kProtocols, p); }
std::optional<Algorithm> parse_algorithm(std::string_view s) { return lookup(kAlgorithms, s); }
std::optional<Protocol> parse_protocol(std::string_view s) { return lookup(kProtocols, s); }

std::vector<Algorithm> all_algorithms() {
  std::vector<Algorithm> out;
  for (const auto& [name, a] : kAlgorithms) out.push_back(a);
  return out;
}
std::vector<Protocol> all_protocols() { return {Protocol::ll, Protocol::ll128, Protocol::simple}; }

}  // namespace wiresim::models
