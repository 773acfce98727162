// Doc: a YAML file read into a plain tree whose every value remembers file:line:column, so
// that errors found long after parsing (in the builder, after includes were merged and
// parameters substituted) still point at the text that caused them.
//
// read_document() follows `include:` (a path or a list, relative to the including file;
// cycles are errors), merges the included documents under the including one (maps merge
// key by key, anything else is replaced), then substitutes `${name}` in every scalar from
// `parameters:` and the command line's `--set name=value`.
//
//   Value doc = read_document("topologies/cluster-h100-ib.yaml", {{"nodes", "64"}});
//   check_keys(doc, {"name", "node", "nodes"}, "");          // unknown keys throw
//   long n = as_count(*find(doc, "nodes"), "nodes", 1);
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/units.h"

namespace wiresim::topo {

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

// Throws sim::InputError at `at`; `via` (a parameter substitution) is appended when given.
[[noreturn]] void fail(const Position& at, const std::string& message, const std::string& via = "");
[[noreturn]] void fail(const Value& v, const std::string& message);

// The document with includes merged and parameters substituted. `parameters:` stays in the
// result (its values substituted) for anyone who wants to print them.
Value read_document(const std::string& path, const std::map<std::string, std::string>& overrides);

// The same for text not read from a file (includes are relative to file_name's folder).
Value read_document_text(const std::string& text, const std::string& file_name,
                         const std::map<std::string, std::string>& overrides);

// One YAML file, no includes or parameters (for tests of the reader itself).
Value read_yaml_file(const std::string& path);
Value read_yaml_text(const std::string& text, const std::string& file_name);

const Value* find(const Value& map, std::string_view key);
// Throws at the first key not in `known`, with the nearest known key as a hint.
void check_keys(const Value& map, std::span<const std::string_view> known, const std::string& path);
// "did you mean `latency`?" or "expected one of: a, b, c"
std::string suggest(std::string_view word, std::span<const std::string_view> known);

// Typed reads. `path` names the value in messages ("links[3].bandwidth").
const Value& require(const Value& map, std::string_view key, const std::string& path);
void require_map(const Value& v, const std::string& path);
void require_sequence(const Value& v, const std::string& path);
std::string as_string(const Value& v, const std::string& path);
long as_count(const Value& v, const std::string& path, long min, long max = 1'000'000);
bool as_bool(const Value& v, const std::string& path);
sim::BytesPerSec as_rate(const Value& v, const std::string& path);   // > 0, with a unit
sim::Seconds as_time(const Value& v, const std::string& path);       // > 0, with a unit

std::string join_path(const std::string& parent, std::string_view key);
std::string index_path(const std::string& parent, std::size_t i);

}  // namespace wiresim::topo
