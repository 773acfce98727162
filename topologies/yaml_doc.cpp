#include "topologies/yaml_doc.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "sim/input_error.h"

namespace wiresim::topo {
namespace fs = std::filesystem;
namespace {

Position position(const std::shared_ptr<const std::string>& file, const YAML::Mark& mark) {
  if (mark.line < 0) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

// Aliases let a small text name the same node many times ("billion laughs"); the copy made
// here would grow exponentially, so it stops at a number of values no topology needs.
constexpr long kMaxValues = 1'000'000;

Value convert(const YAML::Node& node, const std::shared_ptr<const std::string>& file,
              const Position& fallback, long& budget) {
  Value v;
  v.at = position(file, node.Mark());
  if (v.at.line == 0) v.at = fallback;
  if (--budget < 0)
    fail(v.at, fmt::format("the document expands to more than {} values (YAML aliases repeat "
                           "what they name); expected a topology of plain values", kMaxValues));
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      v.kind = Value::Kind::scalar;
      v.text = node.Scalar();
      break;
    case YAML::NodeType::Sequence:
      v.kind = Value::Kind::sequence;
      for (const auto& item : node) v.items.push_back(convert(item, file, v.at, budget));
      break;
    case YAML::NodeType::Map:
      v.kind = Value::Kind::map;
      for (const auto& kv : node) {
        Value::Entry e;
        e.key_at = position(file, kv.first.Mark());
        if (!kv.first.IsScalar()) fail(e.key_at, "expected a plain key (a word), got a structure");
        e.key = kv.first.Scalar();
        for (const auto& seen : v.entries)
          if (seen.key == e.key)
            fail(e.key_at, fmt::format("duplicate key '{}' (first at line {})", e.key,
                                       seen.key_at.line));
        e.value = convert(kv.second, file, e.key_at, budget);
        v.entries.push_back(std::move(e));
      }
      break;
    default:
      v.kind = Value::Kind::null;
  }
  return v;
}

Value parse(const std::string& text, const std::string& file_name) {
  auto file = std::make_shared<const std::string>(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {  // its message says "bad file"
    fail(position(file, e.mark), fmt::format("not valid YAML: nested deeper than {} levels", e.depth()));
  } catch (const YAML::Exception& e) {
    fail(position(file, e.mark), fmt::format("not valid YAML: {}", e.msg));
  }
  long budget = kMaxValues;
  Value v = convert(root, file, Position{file, 1, 1}, budget);
  if (v.kind != Value::Kind::map)
    fail(v.at, "expected a YAML mapping of keys (name:, node:, ...) at the top of the file");
  return v;
}

// Maps merge key by key; anything else in `overlay` replaces what `base` had.
void merge_into(Value& base, const Value& overlay) {
  if (base.kind != Value::Kind::map || overlay.kind != Value::Kind::map) {
    base = overlay;
    return;
  }
  for (const auto& e : overlay.entries) {
    auto it = std::find_if(base.entries.begin(), base.entries.end(),
                           [&](const Value::Entry& b) { return b.key == e.key; });
    if (it == base.entries.end()) base.entries.push_back(e);
    else {
      it->key_at = e.key_at;
      merge_into(it->value, e.value);
    }
  }
}

void erase_key(Value& map, std::string_view key) {
  std::erase_if(map.entries, [&](const Value::Entry& e) { return e.key == key; });
}

Value expand_includes(Value doc, const fs::path& path, std::vector<fs::path>& stack);

// The path with symlinks and dot segments resolved, for cycle detection; a path the system
// cannot resolve (too long, say) is bad input at the place that named it.
fs::path resolved(const fs::path& path, const Position& at) {
  try {
    return fs::weakly_canonical(path);
  } catch (const fs::filesystem_error& e) {
    fail(at, fmt::format("cannot use the path '{}': {}", path.string().substr(0, 200), e.code().message()));
  }
}

Value read_with_includes(const fs::path& path, std::vector<fs::path>& stack,
                         const Position& included_at) {
  const fs::path canonical = resolved(path, included_at);
  if (std::find(stack.begin(), stack.end(), canonical) != stack.end()) {
    std::string chain;
    for (const auto& p : stack) chain += p.filename().string() + " -> ";
    fail(included_at, fmt::format("include cycle: {}{}; expected each file to be included "
                                  "at most once along a chain", chain, canonical.filename().string()));
  }
  std::ifstream in(path);
  if (fs::is_directory(path)) {
    if (included_at.file) fail(included_at, fmt::format("included '{}' is a folder, not a file", path.string()));
    throw sim::InputError(path.string(), 0, 0, "expected a file, got a folder");
  }
  if (!in) {
    if (included_at.file) fail(included_at, fmt::format("cannot read included file '{}'", path.string()));
    throw sim::InputError(path.string(), 0, 0, "cannot read the file");
  }
  std::stringstream text;
  text << in.rdbuf();
  return expand_includes(parse(text.str(), path.string()), path, stack);
}

Value expand_includes(Value doc, const fs::path& path, std::vector<fs::path>& stack) {
  const fs::path canonical = resolved(path, doc.at);
  const Value* include = find(doc, "include");
  if (!include) return doc;

  std::vector<const Value*> names;
  if (include->kind == Value::Kind::sequence)
    for (const auto& item : include->items) names.push_back(&item);
  else names.push_back(include);
  stack.push_back(canonical);
  Value merged;
  merged.kind = Value::Kind::map;
  merged.at = doc.at;
  for (const Value* name : names) {
    const std::string file = as_string(*name, "include");
    Value base = read_with_includes(path.parent_path() / file, stack, name->at);
    // A file's own name and description describe that file, not the ones that include it.
    erase_key(base, "name");
    erase_key(base, "description");
    merge_into(merged, base);
  }
  stack.pop_back();
  erase_key(doc, "include");
  merge_into(merged, doc);
  return merged;
}

// Replaces every ${name} in scalars; parameters themselves hold plain values.
void substitute(Value& v, const std::map<std::string, std::pair<std::string, std::string>>& params) {
  if (v.kind == Value::Kind::scalar) {
    std::string out;
    std::size_t pos = 0;
    while (true) {
      const std::size_t open = v.text.find("${", pos);
      if (open == std::string::npos) break;
      const std::size_t close = v.text.find('}', open);
      if (close == std::string::npos)
        fail(v, fmt::format("unclosed '${{' in '{}'; expected ${{parameter}}", v.text));
      const std::string name = v.text.substr(open + 2, close - open - 2);
      const auto it = params.find(name);
      if (it == params.end()) {
        std::vector<std::string_view> known;
        for (const auto& [k, _] : params) known.push_back(k);
        fail(v, fmt::format("unknown parameter '${{{}}}'; {}", name, suggest(name, known)));
      }
      out += v.text.substr(pos, open - pos) + it->second.first;
      if (!v.via.empty()) v.via += ", ";
      v.via += fmt::format("${{{}}} = '{}'{}", name, it->second.first, it->second.second);
      pos = close + 1;
    }
    if (pos > 0) v.text = out + v.text.substr(pos);
    return;
  }
  for (auto& item : v.items) substitute(item, params);
  for (auto& e : v.entries)
    if (e.key != "parameters") substitute(e.value, params);
}

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

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::null: return "nothing";
    case Value::Kind::scalar: return "a value";
    case Value::Kind::sequence: return "a list";
    case Value::Kind::map: return "a mapping";
  }
  return "?";
}

}  // namespace

Value apply_parameters(Value doc, const std::string& path,
                       const std::map<std::string, std::string>& overrides);

void fail(const Position& at, const std::string& message, const std::string& via) {
  const std::string text = via.empty() ? message : fmt::format("{} ({})", message, via);
  throw sim::InputError(at.file ? *at.file : std::string(), at.line, at.column, text);
}

void fail(const Value& v, const std::string& message) { fail(v.at, message, v.via); }

Value read_yaml_text(const std::string& text, const std::string& file_name) {
  return parse(text, file_name);
}

Value read_yaml_file(const std::string& path) {
  std::vector<fs::path> stack;
  std::ifstream in(path);
  if (!in) throw sim::InputError(path, 0, 0, "cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

Value read_document(const std::string& path, const std::map<std::string, std::string>& overrides) {
  std::vector<fs::path> stack;
  return apply_parameters(read_with_includes(path, stack, Position{}), path, overrides);
}

Value read_document_text(const std::string& text, const std::string& file_name,
                         const std::map<std::string, std::string>& overrides) {
  std::vector<fs::path> stack;
  return apply_parameters(expand_includes(parse(text, file_name), file_name, stack), file_name,
                          overrides);
}

Value apply_parameters(Value doc, const std::string& path,
                       const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::pair<std::string, std::string>> params;
  if (const Value* p = find(doc, "parameters")) {
    require_map(*p, "parameters");
    for (const auto& e : p->entries) {
      if (e.value.kind != Value::Kind::scalar)
        fail(e.value, fmt::format("parameters.{}: expected a plain value (a number or a word), "
                                  "got {}", e.key, kind_name(e.value.kind)));
      params[e.key] = {e.value.text, ""};
    }
  }
  for (const auto& [key, value] : overrides) {
    auto it = params.find(key);
    if (it == params.end()) {
      std::vector<std::string_view> known;
      for (const auto& [k, _] : params) known.push_back(k);
      throw sim::InputError(fmt::format(
          "--set {}={}: {} has no parameter '{}'; {}", key, value, path, key,
          known.empty() ? std::string("it declares no parameters") : suggest(key, known)));
    }
    it->second = {value, " from --set"};
  }
  substitute(doc, params);
  if (Value* p = const_cast<Value*>(find(doc, "parameters")))
    for (auto& e : p->entries) e.value.text = params[e.key].first;
  return doc;
}

const Value* find(const Value& map, std::string_view key) {
  for (const auto& e : map.entries)
    if (e.key == key) return &e.value;
  return nullptr;
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
  std::string list;
  for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  return "expected one of: " + list;
}

void check_keys(const Value& map, std::span<const std::string_view> known, const std::string& path) {
  for (const auto& e : map.entries)
    if (std::find(known.begin(), known.end(), e.key) == known.end())
      fail(e.key_at, fmt::format("{}: unknown key '{}'; {}", join_path(path, e.key), e.key,
                                 suggest(e.key, known)));
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

bool as_bool(const Value& v, const std::string& path) {
  if (v.kind == Value::Kind::scalar) {
    if (v.text == "true" || v.text == "yes") return true;
    if (v.text == "false" || v.text == "no") return false;
  }
  fail(v, fmt::format("{}: expected true or false, got '{}'", path, v.text));
}

sim::BytesPerSec as_rate(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::scalar)
    fail(v, fmt::format("{}: expected a rate with a unit (450GB/s, 400Gb/s), got {}", path,
                        kind_name(v.kind)));
  sim::BytesPerSec r;
  try {
    r = sim::parse_rate(v.text);
  } catch (const std::invalid_argument& e) {
    fail(v, fmt::format("{}: {}", path, e.what()));
  }
  if (!(r.count() > 0.0))
    fail(v, fmt::format("{}: expected a positive rate (450GB/s, 400Gb/s), got '{}'", path, v.text));
  return r;
}

sim::Seconds as_time(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::scalar)
    fail(v, fmt::format("{}: expected a time with a unit (300ns, 1.5us), got {}", path,
                        kind_name(v.kind)));
  sim::Seconds t;
  try {
    t = sim::parse_time(v.text);
  } catch (const std::invalid_argument& e) {
    fail(v, fmt::format("{}: {}", path, e.what()));
  }
  if (!(t.count() > 0.0))
    fail(v, fmt::format("{}: expected a positive time (300ns, 1.5us), got '{}'", path, v.text));
  return t;
}

std::string join_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string index_path(const std::string& parent, std::size_t i) {
  return fmt::format("{}[{}]", parent, i);
}

}  // namespace wiresim::topo
