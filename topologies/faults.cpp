#include "topologies/faults.h"

#include <fnmatch.h>

#include <optional>
#include <set>

#include <fmt/format.h>

#include "input/input_error.h"

namespace wiresim::topo {
namespace {

bool matches(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// "rail3" names rail 3 of a rail-optimised fabric: its NICs and its leaf switches.
std::optional<int> rail_of(const std::string& pattern) {
  if (pattern.size() <= 4 || pattern.compare(0, 4, "rail") != 0) return std::nullopt;
  if (pattern.find_first_not_of("0123456789", 4) != std::string::npos) return std::nullopt;
  return std::stoi(pattern.substr(4));
}

// The links a pattern names: every link of a matching device (or of a device of the named
// rail), and every matching link name.
std::set<LinkId> links_of(const LinkGraph& g, const std::string& pattern, const std::string& flag) {
  std::set<LinkId> out;
  const std::optional<int> rail = pattern.size() < 12 ? rail_of(pattern) : std::nullopt;
  const auto named = [&](DeviceId d) { return matches(pattern, g.device(d).name) || (rail && g.device(d).rail == *rail); };
  for (LinkId id = 0; id < g.link_count(); ++id) {
    const Link& l = g.link(id);
    if (named(l.from) || named(l.to) || matches(pattern, g.link_name(id))) out.insert(id);
  }
  if (out.empty())
    throw input::InputError(fmt::format("{}: '{}' names no device or link of {} (devices are named as `wiresim topo "
                                        "show` lists them, e.g. {}; a link is 'a->b'; railN a rail)",
                                        flag, pattern, g.source, g.device(g.gpus().empty() ? 0 : g.gpus().front()).name));
  return out;
}

double share_of(const std::string& text, const std::string& flag) {
  std::string number = text;
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.pop_back();
  double v = 0.0;
  try {
    std::size_t used = 0;
    v = std::stod(number, &used);
    if (used != number.size()) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw input::InputError(fmt::format("{}: expected PATTERN=SHARE with SHARE like 0.5 or 50%, got '{}'", flag, text));
  }
  if (percent) v /= 100.0;
  if (!(v > 0.0 && v <= 1.0))
    throw input::InputError(fmt::format("{}: the share must be in (0, 1] (0.5 or 50%); to take links out use --fail, got '{}'",
                                        flag, text));
  return v;
}

}  // namespace

FaultReport apply_faults(LinkGraph& graph, const std::vector<std::string>& fail, const std::vector<std::string>& degrade) {
  FaultReport r;
  std::vector<std::string> parts;
  for (const auto& d : degrade) {
    const auto eq = d.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw input::InputError(fmt::format("--degrade: expected PATTERN=SHARE (e.g. spine*=50%), got '{}'", d));
    const std::string pattern = d.substr(0, eq);
    const double share = share_of(d.substr(eq + 1), "--degrade");
    const auto links = links_of(graph, pattern, "--degrade");
    for (LinkId id : links) {
      graph.degrade_link(id, share);
      r.degraded.push_back(id);
    }
    parts.push_back(fmt::format("degraded {} links to {:g}% ({})", links.size(), 100.0 * share, pattern));
  }
  for (const auto& pattern : fail) {
    const auto links = links_of(graph, pattern, "--fail");
    for (LinkId id : links) {
      graph.fail_link(id);
      r.failed.push_back(id);
    }
    parts.push_back(fmt::format("failed {} links ({})", links.size(), pattern));
  }
  r.summary = fmt::format("{}", fmt::join(parts, "; "));
  return r;
}

}  // namespace wiresim::topo
