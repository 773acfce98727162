#include "topologies/import.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "input/input_error.h"
#include "input/lines.h"
#include "sim/units.h"

namespace wiresim::topo {
namespace {

using input::InputError;
using Token = input::Field;

// Header cells are separated by tabs, or (space-aligned output) by two or more spaces.
std::vector<Token> split_header(const std::string& line) {
  std::vector<Token> out;
  const bool tabs = line.find('\t') != std::string::npos;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != '\t' &&
           !(!tabs && line[i] == ' ' && i + 1 < line.size() && line[i + 1] == ' '))
      ++i;
    std::size_t end = i;
    while (end > start && std::isspace(static_cast<unsigned char>(line[end - 1]))) --end;
    if (end > start) out.push_back({std::string_view(line).substr(start, end - start), static_cast<int>(start) + 1});
  }
  return out;
}

bool is_extra_column(const std::string& name) {
  return name == "CPU Affinity" || name == "NUMA Affinity" || name == "GPU NUMA ID";
}

// "SOC" is the pre-2017 name of SYS; DCGM's "PSB" is a single on-board switch (PIX).
std::optional<std::string> normalise_label(const std::string& s) {
  static const std::regex nv("NV[0-9]{1,3}");   // NV# counts bonded links (NV18 on H100); NV1234 is not a label
  if (s == "SOC") return "SYS";
  if (s == "PSB") return "PIX";
  if (s == "X" || s == "PIX" || s == "PXB" || s == "PHB" || s == "NODE" || s == "SYS" ||
      std::regex_match(s, nv))
    return s;
  return std::nullopt;
}

}  // namespace

TopoMatrix parse_topo_matrix(const std::string& text, const std::string& file) {
  std::vector<std::string> lines;
  input::Lines reader(text, file);
  while (const auto line = reader.next()) lines.emplace_back(line->text);
  TopoMatrix m;
  m.file = file;
  std::size_t header = lines.size();
  for (std::size_t i = 0; i < lines.size() && header == lines.size(); ++i) {
    if (!lines[i].empty() && lines[i][0] == '#') continue;
    const auto tokens = input::split_words(lines[i]);
    const auto has = [&](const char* t) {
      return std::any_of(tokens.begin(), tokens.end(), [&](const Token& k) { return k.text == t; });
    };
    if (has("GPU0") && !has("X")) header = i;
  }
  if (header == lines.size())
    throw InputError(file, 1, 1, "no `nvidia-smi topo -m` header found; expected a line of "
                                      "column names GPU0 GPU1 ... NIC0 ...");
  const int header_line = static_cast<int>(header) + 1;
  std::vector<std::string> extras;
  for (const auto& t : split_header(lines[header])) {
    if (is_extra_column(std::string(t.text)) || !extras.empty()) extras.emplace_back(t.text);
    else m.columns.emplace_back(t.text);
  }
  const std::size_t n = m.columns.size();
  m.labels.assign(n, std::vector<std::string>(n));
  m.at.assign(n, std::vector<std::pair<int, int>>(n));
  m.numa.assign(n, -1);
  static const std::regex gpu_name("GPU[0-9]+");
  for (const auto& c : m.columns) m.is_gpu.push_back(std::regex_match(c, gpu_name));

  std::size_t li = header + 1;
  for (std::size_t row = 0; row < n; ++row, ++li) {
    if (li >= lines.size() || input::split_words(lines[li]).empty())
      throw InputError(file, static_cast<int>(std::min(li, lines.size())) + 1, 1,
                            fmt::format("expected the row of {} (the header at line {} has {} "
                                        "columns), got the end of the table", m.columns[row],
                                        header_line, n));
    const auto tokens = input::split_words(lines[li]);
    const int line = static_cast<int>(li) + 1;
    if (tokens[0].text != m.columns[row])
      throw InputError(file, line, tokens[0].column,
                            fmt::format("expected the row of {}, got '{}'", m.columns[row], tokens[0].text));
    if (tokens.size() < n + 1)
      throw InputError(file, line, static_cast<int>(lines[li].size()) + 1,
                            fmt::format("row {} has {} labels, expected {} (one per column)",
                                        m.columns[row], tokens.size() - 1, n));
    for (std::size_t col = 0; col < n; ++col) {
      const Token& t = tokens[col + 1];
      const auto label = normalise_label(std::string(t.text));
      const bool diagonal = row == col;
      if (!label || (*label == "X") != diagonal)
        throw InputError(file, line, t.column, fmt::format(
            "{}/{}: {}; expected {}", m.columns[row], m.columns[col],
            label ? fmt::format("'{}' off the diagonal", t.text) : fmt::format("unknown label '{}'", t.text),
            diagonal ? "X on the diagonal" : "one of NV#, PIX, PXB, PHB, NODE, SYS"));
      if (label->starts_with("NV") && !(m.is_gpu[row] && m.is_gpu[col]))
        throw InputError(file, line, t.column, fmt::format(
            "{}/{}: NVLink label '{}' between devices that are not both GPUs; expected a PCIe "
            "label (PIX, PXB, PHB, NODE, SYS)", m.columns[row], m.columns[col], t.text));
      m.labels[row][col] = *label;
      m.at[row][col] = {line, t.column};
    }
    for (std::size_t e = 0; e + n + 1 < tokens.size() && e < extras.size(); ++e)
      if (extras[e] == "NUMA Affinity" && std::all_of(tokens[n + 1 + e].text.begin(),
                                                      tokens[n + 1 + e].text.end(), ::isdigit)) {
        const Token& t = tokens[n + 1 + e];
        if (t.text.size() > 6)
          throw InputError(file, line, t.column, fmt::format(
              "{}: NUMA Affinity '{}'; expected a NUMA node number (0 to 999999)", m.columns[row], t.text));
        m.numa[row] = std::stoi(std::string(t.text));
      }
  }
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (m.labels[a][b] != m.labels[b][a])
        throw InputError(file, m.at[a][b].first, m.at[a][b].second, fmt::format(
            "{}/{} reads {} but {}/{} reads {}; expected a symmetric matrix", m.columns[a],
            m.columns[b], m.labels[a][b], m.columns[b], m.columns[a], m.labels[b][a]));
  static const std::regex legend(R"(\s*(NIC[0-9]+):\s*(\S+)\s*)");
  for (; li < lines.size(); ++li) {
    std::smatch match;
    if (std::regex_match(lines[li], match, legend)) m.nic_names[match[1]] = match[2];
  }
  return m;
}

std::pair<std::string, LinkOverride> parse_link_override(const std::string& text) {
  static constexpr std::array<std::string_view, 6> kLabels = {"NV", "PIX", "PXB", "PHB", "NODE", "SYS"};
  const auto eq = text.find('=');
  const std::string label = text.substr(0, eq);
  if (eq == std::string::npos || std::find(kLabels.begin(), kLabels.end(), label) == kLabels.end())
    throw InputError(fmt::format("--link {}: expected LABEL=RATE[,LATENCY] with LABEL one of "
                                      "NV, PIX, PXB, PHB, NODE, SYS (e.g. NV=25GB/s,250ns)", text));
  const std::string rest = text.substr(eq + 1);
  const auto comma = rest.find(',');
  LinkOverride o;
  if (const std::string rate = rest.substr(0, comma); !rate.empty()) o.bandwidth = rate;
  if (comma != std::string::npos && comma + 1 < rest.size()) o.latency = rest.substr(comma + 1);
  try {
    if (o.bandwidth && !(sim::parse_rate(*o.bandwidth).count() > 0))
      throw std::invalid_argument("expected a positive rate");
    if (o.latency && !(sim::parse_time(*o.latency).count() > 0))
      throw std::invalid_argument("expected a positive latency");
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("--link {}: {}", text, e.what()));
  }
  return {label, o};
}

}  // namespace wiresim::topo
