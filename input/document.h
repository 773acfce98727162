// Documents: a YAML file that may include others and declare parameters, as topologies and
// scenarios do.
//
// read_document() follows `include:` (a path or a list, relative to the including file;
// cycles are errors), merges the included documents under the including one (maps merge
// key by key, anything else is replaced), then substitutes `${name}` in every scalar from
// `parameters:` and the command line's `--set name=value`. The top level must be a mapping.
//
//   Value doc = read_document("topologies/cluster-h100-ib.yaml", {{"nodes", "64"}});
//   check_keys(doc, {"name", "node", "nodes"}, "");          // unknown keys throw
//   long n = as_count(*find(doc, "nodes"), "nodes", 1);
#pragma once

#include <map>
#include <string>

#include "input/yaml.h"

namespace wiresim::input {

// The document with includes merged and parameters substituted. `parameters:` stays in the
// result (its values substituted) for anyone who wants to print them.
Value read_document(const std::string& path, const std::map<std::string, std::string>& overrides);

// The same for text not read from a file (includes are relative to file_name's folder).
Value read_document_text(const std::string& text, const std::string& file_name,
                         const std::map<std::string, std::string>& overrides);

}  // namespace wiresim::input
