#include "accuracy/dataset.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "models/collective.h"
#include "sim/input_error.h"

namespace wiresim::accuracy {
namespace {

namespace fs = std::filesystem;
using sim::InputError;

// The first collective named on a '# collective:' line ("all_reduce_perf_mpi, float" -> all_reduce).
std::string collective_of(const std::string& line) {
  std::istringstream words(line);
  for (std::string w; words >> w;) {
    while (!w.empty() && (w.back() == ',' || w.back() == ';')) w.pop_back();
    // The MPI build of nccl-tests names its binaries all_reduce_perf_mpi.
    if (w.size() > 4 && w.compare(w.size() - 4, 4, "_mpi") == 0) w.resize(w.size() - 4);
    if (models::parse_collective(w)) return w;
  }
  return "";
}

// '-g N' on an nccl-tests command line: one thread drives N GPUs.
std::optional<int> gpus_per_thread_of(const std::string& line) {
  std::istringstream words(line);
  std::string prev;
  for (std::string w; words >> w; prev = w) {
    if (prev != "-g") continue;
    int g = 0;
    if (std::sscanf(w.c_str(), "%d", &g) == 1 && g >= 1 && g <= 1024) return g;
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
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, 0, 0, "cannot open the validation map (give --map FILE)");
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  const auto fail = [&](const YAML::Node& n, const std::string& what) {
    throw InputError(path, n.Mark().line + 1, n.Mark().column + 1, what);
  };
  const auto sets = root["datasets"];
  if (!sets || !sets.IsMap()) fail(root, "expected a mapping 'datasets: {file: {...}}'");
  const fs::path base = fs::path(path).parent_path();
  std::map<std::string, Mapping> out;
  static const std::vector<std::string> kKeys{"topology", "set",   "gpus",  "gpus_per_node", "ranks",
                                              "collective", "p2p", "algo",  "proto",         "channels",
                                              "gpus_per_thread", "role", "class", "note", "unmapped"};
  for (const auto& kv : sets) {
    const auto file = kv.first.as<std::string>();
    const auto& n = kv.second;
    if (!n.IsMap()) fail(n, file + ": expected a mapping");
    for (const auto& f : n)
      if (std::find(kKeys.begin(), kKeys.end(), f.first.as<std::string>()) == kKeys.end())
        fail(f.first, fmt::format("{}: unknown key '{}' (expected one of: {})", file, f.first.as<std::string>(),
                                  fmt::join(kKeys, ", ")));
    Mapping m;
    try {
      if (n["unmapped"]) m.unmapped = n["unmapped"].as<std::string>();
      if (n["topology"]) m.topology = (base / n["topology"].as<std::string>()).lexically_normal().string();
      else if (!m.unmapped) fail(n, file + ": missing 'topology' (or 'unmapped: reason')");
      if (n["set"])
        for (const auto& s : n["set"]) m.settings[s.first.as<std::string>()] = s.second.as<std::string>();
      if (n["gpus"]) m.gpus = n["gpus"].as<int>();
      if (n["gpus_per_node"]) m.gpus_per_node = n["gpus_per_node"].as<int>();
      if (n["ranks"]) m.ranks = n["ranks"].as<std::vector<int>>();
      if (n["collective"]) m.collective = n["collective"].as<std::string>();
      if (n["p2p"]) m.p2p = n["p2p"].as<bool>();
      if (n["algo"]) m.algo = n["algo"].as<std::string>();
      if (n["proto"]) m.proto = n["proto"].as<std::string>();
      if (n["channels"]) m.channels = n["channels"].as<int>();
      if (n["gpus_per_thread"]) m.gpus_per_thread = n["gpus_per_thread"].as<int>();
      if (n["class"]) m.hw_class = n["class"].as<std::string>();
      if (n["note"]) m.note = n["note"].as<std::string>();
      if (n["role"]) {
        const auto role = parse_role(n["role"].as<std::string>());
        if (!role) fail(n["role"], file + ": role: expected fit, checked or holdout");
        m.role = *role;
      }
    } catch (const YAML::Exception& e) {
      throw InputError(path, e.mark.line + 1, e.mark.column + 1, file + ": " + e.msg);
    }
    if (m.gpus_per_thread && (*m.gpus_per_thread < 1 || *m.gpus_per_thread > 1024))
      fail(n["gpus_per_thread"], file + ": gpus_per_thread: expected 1 to 1024");
    out[file] = m;
  }
  return out;
}

DataFile read_data(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot open");
  DataFile d;
  std::string line;
  int line_no = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# collective:", 0) == 0 && d.collective.empty()) d.collective = collective_of(line.substr(13));
      if (line.rfind("# command:", 0) == 0)
        if (const auto g = gpus_per_thread_of(line.substr(10))) d.gpus_per_thread = *g;
      continue;
    }
    if (!header) {
      if (line.rfind("size_bytes,time_us", 0) != 0)
        throw InputError(path, line_no, 1, "expected the header 'size_bytes,time_us,algbw_GBps,busbw_GBps'");
      header = true;
      continue;
    }
    Measurement p;
    if (std::sscanf(line.c_str(), "%lf,%lf", &p.size, &p.time_us) != 2 || !(p.size > 0) || !(p.time_us > 0) ||
        p.size > 1e15 || p.time_us > 1e12)
      throw InputError(path, line_no, 1, fmt::format("expected size_bytes,time_us,..., got '{}'", line));
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
