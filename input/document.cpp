#include "input/document.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "input/file.h"
#include "input/input_error.h"
#include "input/keys.h"

namespace wiresim::input {
namespace fs = std::filesystem;
namespace {

Value top_level(Value doc) {
  if (doc.kind != Value::Kind::map)
    fail(doc.at, "expected a YAML mapping of keys (name:, node:, ...) at the top of the file");
  return doc;
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

Value read_with_includes(const fs::path& path, std::vector<fs::path>& stack, const Position& included_at) {
  const fs::path canonical = resolved(path, included_at);
  if (std::find(stack.begin(), stack.end(), canonical) != stack.end()) {
    std::string chain;
    for (const auto& p : stack) chain += p.filename().string() + " -> ";
    fail(included_at, fmt::format("include cycle: {}{}; expected each file to be included "
                                  "at most once along a chain", chain, canonical.filename().string()));
  }
  std::string text;
  try {
    text = read_file(path.string());
  } catch (const InputError& e) {
    if (!included_at.file) throw;
    fail(included_at, fmt::format("cannot include '{}': {}", path.string(), e.message()));
  }
  return expand_includes(top_level(read_yaml_text(text, path.string())), path, stack);
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

using Parameters = std::map<std::string, std::pair<std::string, std::string>>;  // value, " from --set"

std::vector<std::string_view> names_of(const Parameters& params) {
  std::vector<std::string_view> known;
  for (const auto& [k, _] : params) known.push_back(k);
  return known;
}

// Replaces every ${name} in scalars; parameters themselves hold plain values.
void substitute(Value& v, const Parameters& params) {
  if (v.kind == Value::Kind::scalar) {
    std::string out;
    std::size_t pos = 0;
    while (true) {
      const std::size_t open = v.text.find("${", pos);
      if (open == std::string::npos) break;
      const std::size_t close = v.text.find('}', open);
      if (close == std::string::npos) fail(v, fmt::format("unclosed '${{' in '{}'; expected ${{parameter}}", v.text));
      const std::string name = v.text.substr(open + 2, close - open - 2);
      const auto it = params.find(name);
      if (it == params.end())
        fail(v, fmt::format("unknown parameter '${{{}}}'; {}", name, suggest(name, names_of(params))));
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

Value apply_parameters(Value doc, const std::string& path, const std::map<std::string, std::string>& overrides) {
  Parameters params;
  if (const Value* p = find(doc, "parameters")) {
    require_map(*p, "parameters");
    for (const auto& e : p->entries) {
      if (e.value.kind != Value::Kind::scalar)
        fail(e.value, fmt::format("parameters.{}: expected a plain value (a number or a word), got {}", e.key,
                                  kind_name(e.value.kind)));
      params[e.key] = {e.value.text, ""};
    }
  }
  for (const auto& [key, value] : overrides) {
    auto it = params.find(key);
    if (it == params.end()) {
      const auto known = names_of(params);
      throw InputError(fmt::format("--set {}={}: {} has no parameter '{}'; {}", key, value, path, key,
                                   known.empty() ? std::string("it declares no parameters") : suggest(key, known)));
    }
    it->second = {value, " from --set"};
  }
  substitute(doc, params);
  for (auto& e : doc.entries)
    if (e.key == "parameters")
      for (auto& p : e.value.entries) p.value.text = params[p.key].first;
  return doc;
}

}  // namespace

Value read_document(const std::string& path, const std::map<std::string, std::string>& overrides) {
  std::vector<fs::path> stack;
  return apply_parameters(read_with_includes(path, stack, Position{}), path, overrides);
}

Value read_document_text(const std::string& text, const std::string& file_name,
                         const std::map<std::string, std::string>& overrides) {
  std::vector<fs::path> stack;
  return apply_parameters(expand_includes(top_level(read_yaml_text(text, file_name)), file_name, stack), file_name,
                          overrides);
}

}  // namespace wiresim::input
