#include "topologies/import_xml_tree.h"

#include <climits>
#include <memory>
#include <optional>

#include <expat.h>
#include <fmt/format.h>

#include "input/input_error.h"

namespace wiresim::topo {
namespace {

// Expat calls back through C frames, so a callback never throws: it records why and stops.
struct Reader {
  XML_Parser parser = nullptr;
  XmlElement root;
  std::vector<XmlElement*> open;  // ancestors of the next element; their vectors do not move
  std::optional<std::string> refused;

  int line() const { return static_cast<int>(XML_GetCurrentLineNumber(parser)); }
  int column() const { return static_cast<int>(XML_GetCurrentColumnNumber(parser)) + 1; }
  void refuse(std::string why) {
    if (!refused) refused = std::move(why);
    XML_StopParser(parser, XML_FALSE);
  }
};

void on_start(void* data, const XML_Char* name, const XML_Char** attributes) {
  Reader& r = *static_cast<Reader*>(data);
  if (static_cast<int>(r.open.size()) >= kMaxXmlDepth)
    return r.refuse(fmt::format("<{}> nested {} deep; expected at most {} levels", name,
                                r.open.size() + 1, kMaxXmlDepth));
  XmlElement e;
  e.name = name;
  e.line = r.line();
  e.column = r.column();
  for (int i = 0; attributes[i]; i += 2) e.attributes.emplace_back(attributes[i], attributes[i + 1]);
  if (r.open.empty()) {
    r.root = std::move(e);
    r.open.push_back(&r.root);
    return;
  }
  auto& siblings = r.open.back()->children;
  siblings.push_back(std::move(e));
  r.open.push_back(&siblings.back());
}

void on_end(void* data, const XML_Char*) { static_cast<Reader*>(data)->open.pop_back(); }

void on_doctype(void* data, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  static_cast<Reader*>(data)->refuse("a DOCTYPE; expected none (NCCL writes none)");
}

}  // namespace

XmlElement parse_xml(const std::string& text, const std::string& file) {
  if (text.size() > INT_MAX) throw input::InputError(file, 0, 0, "too large for an XML file");
  const std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(XML_ParserCreate("UTF-8"),
                                                                            &XML_ParserFree);
  if (!parser) throw std::bad_alloc();
  Reader r;
  r.parser = parser.get();
  XML_SetUserData(r.parser, &r);
  XML_SetElementHandler(r.parser, on_start, on_end);
  XML_SetStartDoctypeDeclHandler(r.parser, on_doctype);
  const bool ok = XML_Parse(r.parser, text.data(), static_cast<int>(text.size()), XML_TRUE) == XML_STATUS_OK;
  if (r.refused) throw input::InputError(file, r.line(), r.column(), *r.refused);
  if (!ok)
    throw input::InputError(file, r.line(), r.column(),
                            fmt::format("not well-formed XML: {}", XML_ErrorString(XML_GetErrorCode(r.parser))));
  return std::move(r.root);
}

}  // namespace wiresim::topo
