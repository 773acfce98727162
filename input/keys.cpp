#include "input/keys.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

namespace wiresim::input {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string suggest(std::string_view word, std::span<const std::string_view> known) {
  std::string_view best;
  std::size_t best_distance = std::string::npos;
  for (std::string_view k : known) {
    const std::size_t d = edit_distance(word, k);
    if (d < best_distance) best_distance = d, best = k;
  }
  if (!best.empty() && best_distance <= std::max<std::size_t>(2, word.size() / 3))
    return fmt::format("did you mean '{}'?", best);
  return fmt::format("expected one of: {}", fmt::join(known, ", "));
}

void check_keys(const Value& map, std::span<const std::string_view> known, const std::string& path) {
  for (const auto& e : map.entries)
    if (std::find(known.begin(), known.end(), e.key) == known.end())
      fail(e.key_at, fmt::format("{}: unknown key '{}'; {}", join_path(path, e.key), e.key, suggest(e.key, known)));
}

std::string loose_name(std::string_view name) {
  std::string out;
  for (char ch : name)
    if (ch != '_' && ch != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  if (out.size() > 4 && out.ends_with("perf")) out.resize(out.size() - 4);
  return out;
}

}  // namespace wiresim::input
