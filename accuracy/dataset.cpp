#include "accuracy/dataset.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "input/file.h"
#include "input/keys.h"
#include "input/lines.h"
#include "input/yaml.h"

#include "models/collective.h"
#include "input/input_error.h"

namespace wiresim::accuracy {
namespace {

namespace fs = std::filesystem;
using input::InputError;

// The first collective named on a '# collective:' line ("all_reduce_perf_mpi, float" -> all_reduce).
std::string collective_of(const std::string& line) {
  for (const input::Field& word : input::split_words(line)) {
    std::string w(word.text);
    while (!w.empty() && (w.back() == ',' || w.back() == ';')) w.pop_back();
    // The MPI build of nccl-tests names its binaries all_reduce_perf_mpi.
    if (w.size() > 4 && w.compare(w.size() - 4, 4, "_mpi") == 0) w.resize(w.size() - 4);
    if (models::parse_collective(w)) return w;
  }
  return "";
}

// '-g N' on an nccl-tests command line: one thread drives N GPUs.
std::optional<int> gpus_per_thread_of(const std::string& line) {
  std::string prev;
  for (const input::Field& word : input::split_words(line)) {
    const std::string w(word.text);
    if (prev == "-g") {
      int g = 0;
      if (std::sscanf(w.c_str(), "%d", &g) == 1 && g >= 1 && g <= 1024) return g;
    }
    prev = w;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Role r) {
  switch (r) {
    case Role::fit: return "fit";
    case Role::checked: return "checked";
    case Role::holdout: return "holdout";
  }
  return "?";
}

std::optional<Role> parse_role(std::string_view s) {
  for (Role r : {Role::fit, Role::checked, Role::holdout})
    if (s == to_string(r)) return r;
  return std::nullopt;
}

std::map<std::string, Mapping> read_map(const std::string& path) {
  using input::find;
  const input::Value root = input::read_yaml_file(path);
  input::require_map(root, "validation map");
  const input::Value& sets = input::require(root, "datasets", "");
  input::require_map(sets, "datasets");
  std::map<std::string, Mapping> out;
  static constexpr std::array<std::string_view, 15> kKeys{
      "topology", "set",      "gpus",  "gpus_per_node",   "ranks", "collective", "p2p",     "algo",
      "proto",    "channels", "role",  "gpus_per_thread", "class", "note",       "unmapped"};
  for (const auto& kv : sets.entries) {
    const std::string& file = kv.key;
    const input::Value& n = kv.value;
    input::require_map(n, file);
    input::check_keys(n, kKeys, file);
    const auto text = [&](const char* key) { return input::as_string(*find(n, key), file + "." + key); };
    const auto count = [&](const char* key, long least, long most) {
      return static_cast<int>(input::as_count(*find(n, key), file + "." + key, least, most));
    };
    Mapping m;
    if (find(n, "unmapped")) m.unmapped = text("unmapped");
    if (find(n, "topology")) m.topology = input::beside(path, text("topology"));
    else if (!m.unmapped) input::fail(n, file + ": missing 'topology' (or 'unmapped: reason')");
    if (const input::Value* set = find(n, "set")) {
      input::require_map(*set, file + ".set");
      for (const auto& s : set->entries) m.settings[s.key] = input::as_string(s.value, file + ".set." + s.key);
    }
    if (find(n, "gpus")) m.gpus = count("gpus", 1, 10'000'000);
    if (find(n, "gpus_per_node")) m.gpus_per_node = count("gpus_per_node", 1, 100'000);
    if (const input::Value* ranks = find(n, "ranks")) {
      input::require_sequence(*ranks, file + ".ranks");
      for (std::size_t i = 0; i < ranks->items.size(); ++i)
        m.ranks.push_back(static_cast<int>(
            input::as_count(ranks->items[i], input::index_path(file + ".ranks", i), 0, 10'000'000)));
    }
    if (find(n, "collective")) m.collective = text("collective");
    if (const input::Value* p2p = find(n, "p2p")) m.p2p = input::as_bool(*p2p, file + ".p2p");
    if (find(n, "algo")) m.algo = text("algo");
    if (find(n, "proto")) m.proto = text("proto");
    if (find(n, "channels")) m.channels = count("channels", 1, 64);
    if (find(n, "gpus_per_thread")) m.gpus_per_thread = count("gpus_per_thread", 1, 1024);
    if (find(n, "class")) m.hw_class = text("class");
    if (find(n, "note")) m.note = text("note");
    if (const input::Value* role = find(n, "role")) {
      const auto r = parse_role(input::as_string(*role, file + ".role"));
      if (!r) input::fail(*role, file + ": role: expected fit, checked or holdout");
      m.role = *r;
    }
    out[file] = m;
  }
  return out;
}

DataFile read_data(const std::string& path) {
  const std::string text = input::read_file(path);
  input::Lines lines(text, path);
  DataFile d;
  bool header = false;
  while (const auto next = lines.next()) {
    const std::string line(next->text);
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# collective:", 0) == 0 && d.collective.empty()) d.collective = collective_of(line.substr(13));
      if (line.rfind("# command:", 0) == 0)
        if (const auto g = gpus_per_thread_of(line.substr(10))) d.gpus_per_thread = *g;
      continue;
    }
    if (!header) {
      if (line.rfind("size_bytes,time_us", 0) != 0)
        next->fail(1, "expected the header 'size_bytes,time_us,algbw_GBps,busbw_GBps'");
      header = true;
      continue;
    }
    const auto fields = input::split_fields(next->text);
    if (fields.size() < 2) next->fail(1, fmt::format("expected size_bytes,time_us,..., got '{}'", line));
    Measurement p;
    p.size = next->as_number(fields[0], "size_bytes");
    p.time_us = next->as_number(fields[1], "time_us");
    if (!(p.size > 0) || !(p.time_us > 0) || p.size > 1e15 || p.time_us > 1e12)
      next->fail(1, fmt::format("expected a positive size_bytes and time_us, got '{}'", line));
    if (fields.size() >= 3 && !fields[2].text.empty()) {
      // nccl-tests prints algbw = size / time in GB/s with two decimals, so a row whose own
      // columns disagree beyond that rounding was mistyped (a size, time or rate off by a digit).
      const double algbw = next->as_number(fields[2], "algbw_GBps");
      p.algbw = algbw;
      const double expected = p.size / p.time_us / 1e3;
      if (std::abs(algbw - expected) > 0.006 + 0.002 * expected)
        next->fail(fields[2].column,
                   fmt::format("algbw_GBps {} disagrees with size_bytes / time_us = {:.3f} GB/s; is the size, "
                               "the time or the rate mistyped?", fields[2].text, expected));
    }
    if (fields.size() >= 4 && !fields[3].text.empty()) p.busbw = next->as_number(fields[3], "busbw_GBps");
    p.line = next->number;
    d.points.push_back(p);
  }
  if (!header) throw InputError(path, 0, 0, "no 'size_bytes,time_us,...' header: not an nccl-tests CSV");
  if (d.points.empty()) throw InputError(path, 0, 0, "no measurements");
  return d;
}

std::vector<topo::DeviceId> pick_ranks(const topo::LinkGraph& graph, const Mapping& m) {
  const auto& gpus = graph.gpus();
  std::vector<topo::DeviceId> ranks;
  if (!m.ranks.empty()) {
    for (int i : m.ranks) {
      if (i < 0 || i >= static_cast<int>(gpus.size()))
        throw InputError(fmt::format("ranks: GPU index {} is not in the topology ({} GPUs)", i, gpus.size()));
      ranks.push_back(gpus[i]);
    }
    return ranks;
  }
  if (m.gpus_per_node > 0) {
    std::map<int, int> taken;
    for (auto g : gpus)
      if (taken[graph.device(g).node]++ < m.gpus_per_node) ranks.push_back(g);
    if (m.gpus > 0 && static_cast<int>(ranks.size()) > m.gpus) ranks.resize(m.gpus);
  } else {
    const int n = m.gpus > 0 ? m.gpus : static_cast<int>(gpus.size());
    if (n > static_cast<int>(gpus.size()))
      throw InputError(fmt::format("gpus: {} but the topology has {} GPUs", n, gpus.size()));
    ranks.assign(gpus.begin(), gpus.begin() + n);
  }
  if (m.gpus > 0 && static_cast<int>(ranks.size()) != m.gpus)
    throw InputError(fmt::format("gpus: {} wanted, the topology gives {}", m.gpus, ranks.size()));
  return ranks;
}

}  // namespace wiresim::accuracy
