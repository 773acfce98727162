#include "input/traffic_matrix.h"

#include <fmt/format.h>

#include "input/file.h"
#include "input/input_error.h"
#include "input/lines.h"

namespace wiresim::input {

std::vector<double> parse_traffic_matrix(std::string_view text, const std::string& source, int n) {
  Lines lines(text, source);
  std::vector<double> m;
  int row = 0;
  while (const auto line = lines.next()) {
    const std::string_view cells = line->text.substr(0, line->text.find('#'));
    if (is_blank(cells)) continue;
    if (row == n) line->fail(1, fmt::format("expected {} rows (one per rank), found more", n));
    // Cells separated by commas, or else by blanks ("1MiB, 2MiB" or "1MiB 2MiB").
    const auto fields = cells.find(',') != std::string_view::npos ? split_fields(cells) : split_words(cells);
    if (static_cast<int>(fields.size()) > n) line->fail(fields[n].column, fmt::format("expected {} columns, found more", n));
    for (const auto& f : fields) m.push_back(line->as_size(f, "").count());
    if (static_cast<int>(fields.size()) != n) line->fail(1, fmt::format("expected {} columns, found {}", n, fields.size()));
    ++row;
  }
  if (row != n) throw InputError(source, row + 1, 1, fmt::format("expected {} rows (one per rank), found {}", n, row));
  for (int i = 0; i < n; ++i) m[static_cast<std::size_t>(i) * n + i] = 0.0;
  return m;
}

std::vector<double> read_traffic_matrix(const std::string& path, int n) {
  return parse_traffic_matrix(read_file(path), path, n);
}

}  // namespace wiresim::input
