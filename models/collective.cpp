#include "models/collective.h"

#include <array>
#include <utility>

#include "input/keys.h"
#include "models/algorithm.h"

namespace wiresim::models {
namespace {

constexpr std::array<std::pair<std::string_view, Protocol>, 3> kProtocols{{
    {"ll", Protocol::ll}, {"ll128", Protocol::ll128}, {"simple", Protocol::simple}}};

}  // namespace

std::string_view to_string(Algorithm a) { return descriptor(a).name; }
std::string_view to_string(Protocol p) {
  for (const auto& [name, v] : kProtocols)
    if (v == p) return name;
  return "?";
}
std::optional<Algorithm> parse_algorithm(std::string_view s) {
  const std::string key = input::loose_name(s);
  for (const AlgorithmDescriptor* d : algorithms())
    if (input::loose_name(d->name) == key) return d->id;
  return std::nullopt;
}
std::optional<Protocol> parse_protocol(std::string_view s) {
  const std::string key = input::loose_name(s);
  for (const auto& [name, value] : kProtocols)
    if (input::loose_name(name) == key) return value;
  return std::nullopt;
}

std::vector<Algorithm> all_algorithms() {
  std::vector<Algorithm> out;
  for (const AlgorithmDescriptor* d : algorithms()) out.push_back(d->id);
  return out;
}
std::vector<Protocol> all_protocols() { return {Protocol::ll, Protocol::ll128, Protocol::simple}; }

}  // namespace wiresim::models
