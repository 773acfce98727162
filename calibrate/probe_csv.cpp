#include "calibrate/probe_csv.h"

#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "input/file.h"
#include "input/input_error.h"
#include "input/lines.h"

namespace wiresim::calibrate {
namespace {

using input::Field;
using input::is_comment_or_blank;

class RowParser {
 public:
  explicit RowParser(const input::TextLine& line) : line_(line) {}

  ProbeRow parse(const std::vector<Field>& f) {
    if (static_cast<int>(f.size()) != kProbeCsvColumns)
      fail(f.back().column, fmt::format("expected {} fields ({}), got {}", kProbeCsvColumns,
                                        kProbeCsvHeader, f.size()));
    ProbeRow r;
    r.line = line_.number;
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
  [[noreturn]] void fail(int column, const std::string& message) const { line_.fail(column, message); }
  std::string text(const Field& f, std::string_view name) const {
    if (f.text.empty()) fail(f.column, fmt::format("{}: empty", name));
    return std::string(f.text);
  }
  double number(const Field& f, std::string_view name, double minimum) const {
    const double v = line_.as_number(f, name);
    if (v < minimum) fail(f.column, fmt::format("{}: expected at least {}, got '{}'", name, minimum, f.text));
    return v;
  }

  // A whole number from 1 to 10^9 (ranks, repeats): anything else is not a count.
  int count(const Field& f, std::string_view name) const {
    const double v = number(f, name, 1.0);
    if (v != std::floor(v) || v > 1e9) fail(f.column, fmt::format("{}: expected a whole number from 1 to 10^9, got '{}'", name, f.text));
    return static_cast<int>(v);
  }

  const input::TextLine& line_;
};

}  // namespace

std::vector<ProbeRow> parse_probe_csv(std::string_view text, const std::string& source) {
  std::vector<ProbeRow> rows;
  input::Lines lines(text, source);
  bool header = false;
  while (const auto line = lines.next()) {
    if (is_comment_or_blank(line->text)) continue;
    if (!header) {
      if (line->text != kProbeCsvHeader)
        line->fail(1, fmt::format("expected the probe CSV header '{}', got '{}'", kProbeCsvHeader, line->text));
      header = true;
      continue;
    }
    rows.push_back(RowParser(*line).parse(input::split_fields(line->text)));
  }
  if (!header)
    throw input::InputError(source, lines.count(), 0, fmt::format("no '{}' header: not a probe CSV", kProbeCsvHeader));
  return rows;
}

std::vector<ProbeRow> read_probe_csv(const std::string& path) { return parse_probe_csv(input::read_file(path), path); }

void write_probe_csv(std::ostream& out, std::span<const ProbeRow> rows) {
  fmt::print(out, "{}\n", kProbeCsvHeader);
  // Enough digits that a value survives the round trip through text.
  for (const ProbeRow& r : rows)
    fmt::print(out, "{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g}\n", r.kind, r.src, r.dst, r.tier, r.ranks,
               r.bytes.count(), r.repeats, r.median.us(), r.min.us(), r.max.us());
}

bool looks_like_probe_csv(std::string_view text) {
  input::Lines lines(text, "");
  while (const auto line = lines.next())
    if (!is_comment_or_blank(line->text)) return line->text == kProbeCsvHeader;
  return false;
}

}  // namespace wiresim::calibrate
