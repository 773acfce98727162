#include "input/lines.h"

#include <cctype>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "input/input_error.h"

namespace wiresim::input {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::vector<Field> split_fields(std::string_view line, char separator) {
  std::vector<Field> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t sep = line.find(separator, start);
    const std::size_t end = sep == std::string_view::npos ? line.size() : sep;
    std::size_t first = start, last = end;
    while (first < last && (line[first] == ' ' || line[first] == '\t')) ++first;
    while (last > first && (line[last - 1] == ' ' || line[last - 1] == '\t')) --last;
    fields.push_back({line.substr(first, last - first), static_cast<int>(first) + 1});
    if (sep == std::string_view::npos) return fields;
    start = sep + 1;
  }
}

std::vector<Field> split_words(std::string_view line) {
  std::vector<Field> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) words.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return words;
}

bool is_blank(std::string_view line) {
  for (char c : line)
    if (!is_space(c)) return false;
  return true;
}

bool is_comment_or_blank(std::string_view line) {
  for (char c : line)
    if (!is_space(c)) return c == '#';
  return true;
}

void TextLine::fail(int column, const std::string& message) const {
  throw InputError(source ? *source : std::string(), number, column, message);
}

double TextLine::as_number(const Field& f, std::string_view name) const {
  const auto v = to_number<double>(f.text);
  if (!v || !std::isfinite(*v)) fail(f.column, fmt::format("{}: expected a number, got '{}'", name, f.text));
  return *v;
}

sim::Bytes TextLine::as_size(const Field& f, std::string_view name) const {
  try {
    return sim::parse_size(f.text);
  } catch (const std::invalid_argument& e) {
    fail(f.column, name.empty() ? std::string(e.what()) : fmt::format("{}: {}", name, e.what()));
  }
}

std::optional<TextLine> Lines::next() {
  if (pos_ >= text_.size()) return std::nullopt;
  std::size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = end + 1;
  return TextLine{&source_, ++count_, line};
}

}  // namespace wiresim::input
