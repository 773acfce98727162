// A small positioned XML tree, read with expat, for the NCCL topology dump importer
// (topologies/import_nccl_xml.h). Elements keep their attributes in document order and the
// 1-based line and column of their start tag, so later checks can point at them. Text
// between tags is dropped (NCCL's dumps have none). A DOCTYPE is refused, so no entity is
// ever expanded; nesting deeper than kMaxXmlDepth is refused too.
//
//   const XmlElement root = parse_xml(text, "dump.xml");   // throws InputError at file:line:col
//   if (const std::string* v = root.attribute("version")) ...
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wiresim::topo {

inline constexpr int kMaxXmlDepth = 64;

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  int line = 0, column = 0;  // of the start tag, 1-based
  std::vector<XmlElement> children;

  const std::string* attribute(std::string_view key) const {
    for (const auto& [k, v] : attributes)
      if (k == key) return &v;
    return nullptr;
  }
};

// The document element of `text`; throws input::InputError at the place expat stopped,
// with expat's reason ("mismatched tag", "unclosed token", ...).
XmlElement parse_xml(const std::string& text, const std::string& file);

}  // namespace wiresim::topo
