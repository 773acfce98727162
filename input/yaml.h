// Value: a YAML text read into a plain tree whose every value remembers file:line:column, so
// that errors found long after parsing (in the topology builder, after includes were merged
// and parameters substituted) still point at the text that caused them. This is the only
// place that calls yaml-cpp; every reader of a YAML file goes through it.
//
// Reading refuses, each at its place with a one-line InputError: text that is not YAML,
// structure nested deeper than kMaxDepth levels (written out or through aliases), an alias
// that names a value containing it (`a: &a [x, *a]`, a cycle), a document that expands to
// more than kMaxValues values through aliases (a "billion laughs"), keys that are not plain
// words, and a key given twice in one mapping.
//
//   Value doc = read_yaml_text(read_file(path), path);
//   require_map(doc, "overlay");
//   long n = as_count(require(doc, "nodes", ""), "nodes", 1);   // "x.yaml:3:8: nodes: ..."
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wiresim::input {

struct Position {
  std::shared_ptr<const std::string> file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
};

struct Value {
  enum class Kind { null, scalar, sequence, map };
  struct Entry;
  Kind kind = Kind::null;
  std::string text;             // scalar
  std::vector<Value> items;     // sequence
  std::vector<Entry> entries;   // map, in file order
  Position at;
  std::string via;              // "${nodes} = '64' from --set" when a parameter filled it in
};

struct Value::Entry {
  std::string key;
  Position key_at;
  Value value;
};

inline constexpr int kMaxDepth = 64;
inline constexpr long kMaxValues = 1'000'000;

// Any YAML text (an empty one reads as a null Value at 1:1).
Value read_yaml_text(const std::string& text, const std::string& file_name);
// read_file + read_yaml_text.
Value read_yaml_file(const std::string& path);

// Throws InputError at `at`; `via` (a parameter substitution) is appended when given.
[[noreturn]] void fail(const Position& at, const std::string& message, const std::string& via = "");
[[noreturn]] void fail(const Value& v, const std::string& message);
// "file:line:column" (or less, as much as is known): for warnings and notes.
std::string where(const Position& at);

const Value* find(const Value& map, std::string_view key);
// "nothing", "a value", "a list", "a mapping": for messages.
const char* kind_name(Value::Kind kind);

// Typed reads. `path` names the value in messages ("links[3].bandwidth").
const Value& require(const Value& map, std::string_view key, const std::string& path);
void require_map(const Value& v, const std::string& path);
void require_sequence(const Value& v, const std::string& path);
std::string as_string(const Value& v, const std::string& path);               // not empty
long as_count(const Value& v, const std::string& path, long min, long max = 1'000'000);
double as_number(const Value& v, const std::string& path);                     // finite
bool as_bool(const Value& v, const std::string& path);                          // true/false/yes/no

std::string join_path(const std::string& parent, std::string_view key);   // "links[3]" + "to"
std::string index_path(const std::string& parent, std::size_t i);         // "links" + 3

}  // namespace wiresim::input
