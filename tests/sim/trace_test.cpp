#include <doctest/doctest.h>

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "sim/executor.h"
#include "sim/trace.h"
#include "sim/transfer_dag.h"

using namespace wiresim::sim;

namespace {

// A strict little JSON reader: true if `text` is exactly one JSON value (RFC 8259 syntax).
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : s_(text) {}
  bool valid() {
    skip();
    if (!value()) return false;
    skip();
    return i_ == s_.size();
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool value() {
    skip();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return string();
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    return number();
  }
  bool object() {
    ++i_;
    if (eat('}')) return true;
    do {
      skip();
      if (!string() || !eat(':') || !value()) return false;
    } while (eat(','));
    return eat('}');
  }
  bool array() {
    ++i_;
    if (eat(']')) return true;
    do {
      if (!value()) return false;
    } while (eat(','));
    return eat(']');
  }
  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') ++i_;
    }
    return false;
  }
  bool number() {
    const std::size_t begin = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                              s_[i_] == 'e' || s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-'))
      ++i_;
    return i_ > begin && std::isdigit(static_cast<unsigned char>(s_[i_ - 1]));
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

bool contains(const std::string& text, std::string_view what) {
  return text.find(what) != std::string::npos;
}

struct Ring {
  std::vector<LinkSpec> links;
  TransferDag dag;
  std::vector<std::string> names;
};

// 4 GPUs on a crossbar, 2 ring steps; GPU 0 also sends an extra chunk to GPU 2 at once.
Ring small_ring() {
  Ring r;
  const int n = 4;
  for (int i = 0; i < n; ++i) r.links.push_back({BytesPerSec{100e9}, Seconds{1e-6}, "up" + std::to_string(i)});
  for (int i = 0; i < n; ++i) r.links.push_back({BytesPerSec{100e9}, Seconds{1e-6}, "down" + std::to_string(i)});
  for (int i = 0; i < n; ++i) r.names.push_back("gpu" + std::to_string(i));
  const LabelId step = r.dag.intern_label("ring \"step\"");
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < n; ++i) {
      const std::vector<LinkId> route{LinkId(i), LinkId(n + (i + 1) % n)};
      const NodeId id = r.dag.add_transfer(route, Bytes{1e6}, std::nullopt, BytesPerSec::unlimited(),
                                           step, i, (i + 1) % n);
      if (s > 0) r.dag.add_dependency(id - n + (i == 0 ? n - 1 : -1), id);
    }
  const std::vector<LinkId> extra{0, LinkId(n + 2)};
  r.dag.add_transfer(extra, Bytes{1e6}, std::nullopt, BytesPerSec::unlimited(), 0, 0, 2);
  r.dag.add_delay(Seconds{3e-6}, r.dag.intern_label("launch"), 1);
  return r;
}

}  // namespace

TEST_CASE("trace: valid Chrome JSON with named tracks, lanes, bytes, route and rate") {
  Ring ring = small_ring();
  const RunResult result = run_dag(ring.links, ring.dag);
  std::ostringstream out;
  write_chrome_trace(out, ring.dag, result, {.track_names = ring.names, .links = ring.links});
  const std::string json = out.str();
  CHECK(JsonChecker(json).valid());
  CHECK(contains(json, "\"traceEvents\""));
  CHECK(contains(json, "\"name\":\"gpu0\""));
  // The label's quotes are escaped.
  CHECK(contains(json, "\"name\":\"ring \\\"step\\\"\""));
  CHECK(contains(json, "\"route\":\"up0, down1\""));
  CHECK(contains(json, "\"bytes\":1000000"));
  // GPU 2's first send has its links to itself: 1 MB in 10 us once its 2 us latency is
  // paid, so 100 GB/s.
  CHECK(contains(json, "\"rate_GBps\":100.000"));
  // GPU 0's ring send and its extra send overlap, so the extra send goes to a second lane;
  // GPU 1's launch delay overlaps its ring send and takes lane 2 as well, not lane 3.
  CHECK(contains(json, "\"name\":\"gpu0 #2\""));
  CHECK(contains(json, "\"name\":\"gpu1 #2\""));
  CHECK_FALSE(contains(json, "\"name\":\"gpu1 #3\""));
  CHECK(contains(json, "\"name\":\"launch\""));
  CHECK_FALSE(contains(json, "\"links\""));
  CHECK_FALSE(contains(json, "warning"));
}

TEST_CASE("trace: per-link tracks and a cap on slices") {
  Ring ring = small_ring();
  const RunResult result = run_dag(ring.links, ring.dag);
  std::ostringstream full;
  write_chrome_trace(full, ring.dag, result,
                     {.track_names = ring.names, .links = ring.links, .link_tracks = true});
  CHECK(JsonChecker(full.str()).valid());
  CHECK(contains(full.str(), "\"name\":\"down1\""));
  // A cap of 4 slices keeps the earliest and says so.
  std::ostringstream cut;
  write_chrome_trace(cut, ring.dag, result, {.track_names = {}, .links = ring.links, .max_slices = 4});
  CHECK(JsonChecker(cut.str()).valid());
  CHECK(contains(cut.str(), "\"warning\""));
  CHECK(contains(cut.str(), "\"name\":\"track 0\""));
  // Links the options do not know are refused.
  CHECK_THROWS_AS(write_chrome_trace(cut, ring.dag, result, {}), std::invalid_argument);
}
