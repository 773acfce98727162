#include "calibrate/probe_csv.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "sim/input_error.h"

namespace wiresim::calibrate {
namespace {

struct Field {
  std::string_view text;
  int column;  // 1-based
};

std::vector<Field> split(std::string_view line) {
  std::vector<Field> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    std::string_view f = line.substr(start, end - start);
    while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
    while (!f.empty() && f.back() == ' ') f.remove_suffix(1);
    fields.push_back({f, static_cast<int>(start) + 1});
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

bool is_comment_or_blank(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r");
  return first == std::string_view::npos || line[first] == '#';
}

class RowParser {
 public:
  RowParser(const std::string& source, int line) : source_(source), line_(line) {}

  ProbeRow parse(const std::vector<Field>& f) {
    if (static_cast<int>(f.size()) != kProbeCsvColumns)
      fail(f.back().column, fmt::format("expected {} fields ({}), got {}", kProbeCsvColumns,
                                        kProbeCsvHeader, f.size()));
    ProbeRow r;
    r.line = line_;
    r.kind = text(f[0], "kind");
    r.src = text(f[1], "src");
    r.dst = text(f[2], "dst");
    r.tier = text(f[3], "tier");
    r.ranks = count(f[4], "ranks");
    r.bytes = sim::Bytes(number(f[5], "bytes", 0.0));
    r.repeats = count(f[6], "repeats");
    r.median = sim::Seconds(number(f[7], "median_us", 0.0) * 1e-6);
    r.min = sim::Seconds(number(f[8], "min_us", 0.0) * 1e-6);
    r.max = sim::Seconds(number(f[9], "max_us", 0.0) * 1e-6);
    if (r.median.count() <= 0.0) fail(f[7].column, "median_us: a measured time must be positive");
    if (r.min > r.median || r.median > r.max)
      fail(f[7].column, "expected min_us <= median_us <= max_us");
    return r;
  }

 private:
  [[noreturn]] void fail(int column, const std::string& message) const {
    throw sim::InputError(source_, line_, column, message);
  }
  std::string text(const Field& f, std::string_view name) const {
    if (f.text.empty()) fail(f.column, fmt::format("{}: empty", name));
    return std::string(f.text);
  }
  double number(const Field& f, std::string_view name, double minimum) const {
    double v = 0.0;
    const auto [ptr, ec] = std::from_chars(f.text.data(), f.text.data() + f.text.size(), v);
    if (f.text.empty() || ec != std::errc{} || ptr != f.text.data() + f.text.size() || !std::isfinite(v))
      fail(f.column, fmt::format("{}: expected a number, got '{}'", name, f.text));
    if (v < minimum) fail(f.column, fmt::format("{}: expected at least {}, got '{}'", name, minimum, f.text));
    return v;
  }

  // A whole number from 1 to 10^9 (ranks, repeats): anything else is not a count.
  int count(const Field& f, std::string_view name) const {
    const double v = number(f, name, 1.0);
    if (v != std::floor(v) || v > 1e9) fail(f.column, fmt::format("{}: expected a whole number from 1 to 10^9, got '{}'", name, f.text));
    return static_cast<int>(v);
  }

  const std::string& source_;
  int line_;
};

}  // namespace

std::vector<ProbeRow> parse_probe_csv(std::istream& in, const std::string& source) {
  std::vector<ProbeRow> rows;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (is_comment_or_blank(line)) continue;
    if (!header) {
      if (line != kProbeCsvHeader)
        throw sim::InputError(source, number, 1,
                              fmt::format("expected the probe CSV header '{}', got '{}'", kProbeCsvHeader, line));
      header = true;
      continue;
    }
    rows.push_back(RowParser(source, number).parse(split(line)));
  }
  if (!header) throw sim::InputError(source, number, 0, fmt::format("no '{}' header: not a probe CSV", kProbeCsvHeader));
  return rows;
}

std::vector<ProbeRow> read_probe_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw sim::InputError(path, 0, 0, "cannot open the file");
  return parse_probe_csv(in, path);
}

void write_probe_csv(std::ostream& out, std::span<const ProbeRow> rows) {
  fmt::print(out, "{}\n", kProbeCsvHeader);
  // Enough digits that a value survives the round trip through text.
  for (const ProbeRow& r : rows)
    fmt::print(out, "{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g}\n", r.kind, r.src, r.dst, r.tier, r.ranks,
               r.bytes.count(), r.repeats, r.median.us(), r.min.us(), r.max.us());
}

bool looks_like_probe_csv(std::istream& in) {
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!is_comment_or_blank(line)) return line == kProbeCsvHeader;
  }
  return false;
}

}  // namespace wiresim::calibrate
