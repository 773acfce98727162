// read_file: the one way a reader gets a file's text. Errors say why the file cannot be read,
// as the system does, and name the file: "x.yaml: cannot read the file: No such file or
// directory", "...: Permission denied", "x.yaml: expected a file, got a folder".
//
//   const std::string text = read_file("topologies/hgx-h100.yaml");   // or throws InputError
//   const Value doc = read_yaml_text(text, "topologies/hgx-h100.yaml");
//   beside("scenarios/a.yaml", "../topologies/x.yaml")   // "topologies/x.yaml"
#pragma once

#include <string>

namespace wiresim::input {

// The whole file; throws InputError(path, 0, 0, why) when it cannot be read, is a folder,
// or is larger than kMaxFileBytes (an input file that big is a mistake: /dev/zero, a core).
std::string read_file(const std::string& path);

inline constexpr long long kMaxFileBytes = 1LL << 30;

// A path named inside `file` (a topology in a scenario, a scenario in a jobs file): absolute as
// written, otherwise taken from `file`'s folder, normalised ("scenarios/../topologies/x.yaml"
// -> "topologies/x.yaml").
std::string beside(const std::string& file, const std::string& relative);

}  // namespace wiresim::input
