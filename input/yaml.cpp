#include "input/yaml.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "input/file.h"
#include "input/input_error.h"

namespace wiresim::input {
namespace {

Position position(const std::shared_ptr<const std::string>& file, const YAML::Mark& mark) {
  if (mark.line < 0) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

// yaml-cpp resolves an alias to the very node it names, so a document is a graph, not a
// tree: `a: &a [x, *a]` contains itself, and a chain of aliases nests as deep as it is long.
// The copy made here walks that graph with the nodes above it in hand, and refuses a node
// that is its own ancestor, a depth past kMaxDepth, and more than kMaxValues values in all.
class Converter {
 public:
  explicit Converter(std::shared_ptr<const std::string> file) : file_(std::move(file)) {}

  Value convert(const YAML::Node& node, const Position& fallback) {
    Value v;
    v.at = position(file_, node.Mark());
    if (v.at.line == 0) v.at = fallback;
    if (--budget_ < 0)
      fail(v.at, fmt::format("the document expands to more than {} values (YAML aliases repeat "
                             "what they name); expected plain values", kMaxValues));
    if (node.IsSequence() || node.IsMap()) {
      for (const YAML::Node& above : path_)
        if (above.is(node))
          fail(fallback, fmt::format("an alias names a value that contains it (the value anchored at line {}); "
                                     "expected aliases to name values defined before them", v.at.line));
      if (static_cast<int>(path_.size()) >= kMaxDepth)
        fail(v.at, fmt::format("nested deeper than {} levels (through aliases or written out); "
                               "expected a flatter document", kMaxDepth));
    }
    path_.push_back(node);
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        v.kind = Value::Kind::scalar;
        v.text = node.Scalar();
        break;
      case YAML::NodeType::Sequence:
        v.kind = Value::Kind::sequence;
        for (const auto& item : node) v.items.push_back(convert(item, v.at));
        break;
      case YAML::NodeType::Map:
        v.kind = Value::Kind::map;
        for (const auto& kv : node) v.entries.push_back(entry(kv.first, kv.second, v));
        break;
      default:
        v.kind = Value::Kind::null;
    }
    path_.pop_back();
    return v;
  }

 private:
  Value::Entry entry(const YAML::Node& key, const YAML::Node& value, const Value& map) {
    Value::Entry e;
    e.key_at = position(file_, key.Mark());
    if (e.key_at.line == 0) e.key_at = map.at;
    if (!key.IsScalar()) fail(e.key_at, "expected a plain key (a word), got a structure");
    e.key = key.Scalar();
    for (const auto& seen : map.entries)
      if (seen.key == e.key)
        fail(e.key_at, fmt::format("duplicate key '{}' (first at line {})", e.key, seen.key_at.line));
    e.value = convert(value, e.key_at);
    return e;
  }

  std::shared_ptr<const std::string> file_;
  std::vector<YAML::Node> path_;
  long budget_ = kMaxValues;
};

}  // namespace

Value read_yaml_text(const std::string& text, const std::string& file_name) {
  auto file = std::make_shared<const std::string>(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {  // its message says "bad file"
    fail(position(file, e.mark), fmt::format("not valid YAML: nested deeper than {} levels", e.depth()));
  } catch (const YAML::Exception& e) {
    fail(position(file, e.mark), fmt::format("not valid YAML: {}", e.msg));
  }
  return Converter(file).convert(root, Position{file, 1, 1});
}

Value read_yaml_file(const std::string& path) { return read_yaml_text(read_file(path), path); }

void fail(const Position& at, const std::string& message, const std::string& via) {
  const std::string text = via.empty() ? message : fmt::format("{} ({})", message, via);
  throw InputError(at.file ? *at.file : std::string(), at.line, at.column, text);
}

void fail(const Value& v, const std::string& message) { fail(v.at, message, v.via); }

std::string where(const Position& at) {
  const std::string file = at.file ? *at.file : std::string();
  if (at.line <= 0) return file;
  return fmt::format("{}:{}:{}", file, at.line, at.column);
}

const Value* find(const Value& map, std::string_view key) {
  for (const auto& e : map.entries)
    if (e.key == key) return &e.value;
  return nullptr;
}

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::null: return "nothing";
    case Value::Kind::scalar: return "a value";
    case Value::Kind::sequence: return "a list";
    case Value::Kind::map: return "a mapping";
  }
  return "?";
}

const Value& require(const Value& map, std::string_view key, const std::string& path) {
  if (const Value* v = find(map, key)) return *v;
  fail(map.at, fmt::format("{}: missing '{}'", path.empty() ? "top level" : path, key));
}

void require_map(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::map)
    fail(v, fmt::format("{}: expected a mapping (key: value lines), got {}", path, kind_name(v.kind)));
}

void require_sequence(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::sequence)
    fail(v, fmt::format("{}: expected a list (- item lines), got {}", path, kind_name(v.kind)));
}

std::string as_string(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::scalar || v.text.empty())
    fail(v, fmt::format("{}: expected a word or text, got {}", path, kind_name(v.kind)));
  return v.text;
}

long as_count(const Value& v, const std::string& path, long min, long max) {
  if (v.kind != Value::Kind::scalar)
    fail(v, fmt::format("{}: expected a whole number, got {}", path, kind_name(v.kind)));
  long n = 0;
  const auto [ptr, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
  if (ec != std::errc{} || ptr != v.text.data() + v.text.size())
    fail(v, fmt::format("{}: expected a whole number (a plain count, no unit), got '{}'", path, v.text));
  if (n < min || n > max)
    fail(v, fmt::format("{}: expected a count from {} to {}, got {}", path, min, max, n));
  return n;
}

double as_number(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::scalar) fail(v, fmt::format("{}: expected a number, got {}", path, kind_name(v.kind)));
  std::string_view s = v.text;
  if (s.starts_with('+')) s.remove_prefix(1);
  double d = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size() || !std::isfinite(d))
    fail(v, fmt::format("{}: expected a number, got '{}'", path, v.text));
  return d;
}

bool as_bool(const Value& v, const std::string& path) {
  if (v.kind == Value::Kind::scalar) {
    if (v.text == "true" || v.text == "yes") return true;
    if (v.text == "false" || v.text == "no") return false;
  }
  fail(v, fmt::format("{}: expected true or false, got '{}'", path, v.text));
}

std::string join_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string index_path(const std::string& parent, std::size_t i) {
  return fmt::format("{}[{}]", parent, i);
}

}  // namespace wiresim::input
