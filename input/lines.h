// Lines and fields: the one reader of line-oriented text (CSV files, nccl-tests logs, traffic
// matrices, `nvidia-smi topo -m`). Lines are numbered from 1, a trailing '\r' is dropped; a
// line splits into fields at a separator (CSV: spaces around a field trimmed) or at runs of
// white space (logs), and each field keeps its 1-based column, so a bad field is an InputError
// at file:line:column.
//
//   Lines lines(text, "probe.csv");
//   while (auto line = lines.next()) {
//     if (is_comment_or_blank(line->text)) continue;
//     const auto f = split_fields(line->text);
//     double us = line->as_number(f[7], "median_us");   // "probe.csv:4:31: median_us: ..."
//   }
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.h"

namespace wiresim::input {

struct Field {
  std::string_view text;
  int column = 1;  // 1-based
};

// "a, b,,c" -> "a", "b", "", "c": every field, empty ones too, spaces and tabs around each trimmed.
std::vector<Field> split_fields(std::string_view line, char separator = ',');
// "  a  b\tc" -> "a", "b", "c".
std::vector<Field> split_words(std::string_view line);
bool is_blank(std::string_view line);
// Blank, or '#' is its first character that is not white space.
bool is_comment_or_blank(std::string_view line);

// A whole number or a floating-point one, the whole text and nothing else; nullopt otherwise.
template <typename T>
std::optional<T> to_number(std::string_view s) {
  T value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

// One line of a file, for errors at its columns and for reading its fields.
struct TextLine {
  const std::string* source = nullptr;
  int number = 0;         // 1-based
  std::string_view text;

  [[noreturn]] void fail(int column, const std::string& message) const;
  // A finite number ("1.5", "2e9"); errors name the field: "median_us: expected a number, got 'x'".
  double as_number(const Field& f, std::string_view name) const;
  // A size with its unit ("1MiB", parse_size).
  sim::Bytes as_size(const Field& f, std::string_view name) const;
};

class Lines {
 public:
  Lines(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}
  Lines(const Lines&) = delete;   // lines point at source_
  Lines& operator=(const Lines&) = delete;
  // The next line, or nullopt at the end of the text.
  std::optional<TextLine> next();
  // Lines returned so far (the last line's number).
  int count() const { return count_; }
  const std::string& source() const { return source_; }

 private:
  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
  int count_ = 0;
};

}  // namespace wiresim::input
