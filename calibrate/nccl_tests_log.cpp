#include "calibrate/nccl_tests_log.h"

#include <cctype>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "input/dtype.h"
#include "input/file.h"
#include "input/input_error.h"
#include "input/lines.h"

namespace wiresim::calibrate {
namespace {

using input::Collective;
using input::parse_collective;
using input::to_number;
using Token = input::Field;

std::vector<Token> tokenize(std::string_view line) { return input::split_words(line); }

// Where each field of a result row is, from the names in the table's header line.
struct Group {
  int time = -1, algbw = -1, busbw = -1, wrong = -1;
};
struct Layout {
  int fields = 0;
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  Group groups[2];
  std::string names;  // for messages
};

// Without a header line: the current 13-field layout, or the legacy 12 without root.
Layout default_layout(int fields) {
  Layout l;
  l.fields = fields;
  l.size = 0, l.count = 1, l.type = 2, l.redop = 3;
  const int first = fields == 12 ? 4 : 5;
  if (fields != 12) l.root = 4;
  for (int g = 0; g < 2; ++g) l.groups[g] = {first + 4 * g, first + 4 * g + 1, first + 4 * g + 2,
                                             first + 4 * g + 3};
  l.names = fields == 12 ? "size count type redop time algbw busbw error time algbw busbw error"
                         : "size count type redop root time algbw busbw #wrong time algbw busbw #wrong";
  return l;
}

// `# size count type redop root time algbw busbw #wrong time algbw busbw #wrong`
std::optional<Layout> header_layout(const std::vector<Token>& names) {
  if (names.size() < 7 || names[0].text != "size" || names[1].text != "count") return std::nullopt;
  Layout l;
  l.fields = static_cast<int>(names.size());
  int group = -1;
  for (int i = 0; i < l.fields; ++i) {
    const std::string_view n = names[i].text;
    if (!l.names.empty()) l.names += ' ';
    l.names += n;
    if (n == "size") l.size = i;
    else if (n == "count") l.count = i;
    else if (n == "type") l.type = i;
    else if (n == "redop") l.redop = i;
    else if (n == "root") l.root = i;
    else if (n == "time" && group < 1) l.groups[++group].time = i;
    else if (group >= 0 && n == "algbw") l.groups[group].algbw = i;
    else if (group >= 0 && n == "busbw") l.groups[group].busbw = i;
    else if (group >= 0 && (n == "#wrong" || n == "error" || n == "wrong")) l.groups[group].wrong = i;
  }
  const Group& g = l.groups[0];
  if (l.type < 0 || l.redop < 0 || g.time < 0 || g.algbw < 0 || g.busbw < 0) return std::nullopt;
  return l;
}

class Reader {
 public:
  explicit Reader(const std::string& source) { log_.source = source; }
  void line(int number, std::string_view text);
  NcclTestsLog finish(int last_line);

 private:
  [[noreturn]] void fail(int column, const std::string& message) const {
    throw input::InputError(log_.source, line_, column, message);
  }
  void comment(std::string_view body, int offset);
  void rank_line(const std::vector<Token>& t);
  void settings_line(const std::vector<Token>& t);
  void row(const std::vector<Token>& t);
  double number(const Token& t, std::string_view what);
  std::optional<NcclTestsSample> sample(const std::vector<Token>& t, const Group& g, bool optional);
  void other_line(std::string_view text);

  NcclTestsLog log_;
  std::optional<Layout> layout_;
  std::optional<Collective> from_banner_, from_command_;
  int line_ = 0;
};

void Reader::line(int number, std::string_view text) {
  line_ = number;
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  std::size_t first = 0;
  while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) ++first;
  if (first == text.size()) return;
  if (text[first] == '#') return comment(text.substr(first + 1), static_cast<int>(first) + 1);
  if (std::isdigit(static_cast<unsigned char>(text[first]))) return row(tokenize(text));
  other_line(text);
}

// Shell prompts, command lines, `NCCL version 2.28.7+cuda13.0`, NCCL INFO chatter.
void Reader::other_line(std::string_view text) {
  const auto t = tokenize(text);
  if (t.size() >= 3 && t[0].text == "NCCL" && t[1].text == "version") {
    log_.nccl_version = std::string(t[2].text);
    return;
  }
  for (const Token& token : t) {
    std::string_view name = token.text;
    if (const auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    if (!name.ends_with("_perf")) continue;
    if (auto op = parse_collective(name)) {
      from_command_ = op;
      log_.command = std::string(text.substr(token.column - 1));
      return;
    }
  }
}

void Reader::comment(std::string_view body, int offset) {
  auto t = tokenize(body);
  for (Token& token : t) token.column += offset;
  if (t.empty()) return;
  const std::string_view head = t[0].text;
  if (head == "Rank") return rank_line(t);
  if (head == "nThread") return settings_line(t);
  if (head == "size") {
    if (auto l = header_layout(t)) layout_ = l;
    return;
  }
  if (head == "Truncated") log_.truncated = true;
  if (t.size() >= 3 && head == "NCCL" && t[1].text == "version") log_.nccl_version = std::string(t[2].text);
  if (t.size() >= 3 && head == "nccl-tests" && t[1].text == "version") log_.tests_version = std::string(t[2].text);
  if (t.size() >= 4 && head == "Collective" && t[1].text == "test" && t[2].text == "starting:")
    from_banner_ = parse_collective(t[3].text);
  if (t.size() >= 3 && head == "Avg" && t[1].text == "bus" && t[2].text == "bandwidth") {
    const Token& last = t.back();
    if (auto v = to_number<double>(last.text)) log_.avg_busbw_gbps = v;
    else fail(last.column, fmt::format("Avg bus bandwidth: expected a number, got '{}'", last.text));
  }
}

// `Rank 0 Group 0 Pid 1471953 on dgx-06 device 0 [0x1b] NVIDIA H100 80GB HBM3` (no Group: legacy)
void Reader::rank_line(const std::vector<Token>& t) {
  NcclTestsRank r;
  std::size_t i = 0;
  auto expect = [&](std::string_view keyword) {
    if (i >= t.size() || t[i].text != keyword)
      fail(i < t.size() ? t[i].column : t.back().column,
           fmt::format("device line: expected '{}' (Rank N [Group G] Pid P on HOST device D [BUS] NAME)",
                       keyword));
    ++i;
  };
  auto integer = [&](std::string_view what) -> long {
    if (i >= t.size()) fail(t.back().column, fmt::format("device line: expected {} at end of line", what));
    auto v = to_number<long>(t[i].text);
    if (!v) fail(t[i].column, fmt::format("device line: expected {} (a number), got '{}'", what, t[i].text));
    ++i;
    return *v;
  };
  expect("Rank");
  r.rank = static_cast<int>(integer("a rank"));
  if (i < t.size() && t[i].text == "Group") {
    ++i;
    r.group = static_cast<int>(integer("a group"));
  }
  expect("Pid");
  r.pid = integer("a process id");
  expect("on");
  if (i >= t.size()) fail(t.back().column, "device line: expected a host name after 'on'");
  r.host = std::string(t[i++].text);
  expect("device");
  r.device = static_cast<int>(integer("a device index"));
  if (i < t.size() && t[i].text.starts_with('[') && t[i].text.ends_with(']')) {
    r.bus_id = std::string(t[i].text.substr(1, t[i].text.size() - 2));
    ++i;
  }
  for (; i < t.size(); ++i) {
    if (!r.device_name.empty()) r.device_name += ' ';
    r.device_name += t[i].text;
  }
  log_.ranks.push_back(std::move(r));
}

// `nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 ...`
void Reader::settings_line(const std::vector<Token>& t) {
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    const std::string_view key = t[i].text;
    const auto value = to_number<long long>(t[i + 1].text);
    if (!value) continue;
    if ((key == "nThread" || key == "nGpus") && (*value < 1 || *value > 1024))
      fail(t[i + 1].column, fmt::format("{}: expected 1 to 1024, got {}", key, *value));
    if (key == "nThread") log_.n_threads = static_cast<int>(*value);
    else if (key == "nGpus") log_.n_gpus = static_cast<int>(*value);
    else if (key == "minBytes") log_.min_bytes = sim::Bytes(static_cast<double>(*value));
    else if (key == "maxBytes") log_.max_bytes = sim::Bytes(static_cast<double>(*value));
    else if (key == "iters:" && i > 0 && t[i - 1].text == "warmup") log_.warmup_iters = static_cast<int>(*value);
    else if (key == "iters:" && (i == 0 || t[i - 1].text != "agg")) log_.iters = static_cast<int>(*value);
  }
}

double Reader::number(const Token& t, std::string_view what) {
  const auto v = to_number<double>(t.text);
  if (!v) fail(t.column, fmt::format("{}: expected a number, got '{}'", what, t.text));
  return *v;
}

std::optional<NcclTestsSample> Reader::sample(const std::vector<Token>& t, const Group& g, bool optional) {
  if (g.time < 0 || g.algbw < 0 || g.busbw < 0) return std::nullopt;
  if (optional && t[g.time].text == "N/A") return std::nullopt;
  NcclTestsSample s;
  s.time = sim::Seconds(number(t[g.time], "time (us)") * 1e-6);
  s.algbw_gbps = number(t[g.algbw], "algbw (GB/s)");
  s.busbw_gbps = number(t[g.busbw], "busbw (GB/s)");
  if (g.wrong >= 0 && t[g.wrong].text != "N/A") s.wrong = number(t[g.wrong], "#wrong");
  return s;
}

void Reader::row(const std::vector<Token>& t) {
  if (!layout_) layout_ = default_layout(t.size() == 12 ? 12 : 13);
  const Layout& l = *layout_;
  if (static_cast<int>(t.size()) != l.fields) {
    const int column = static_cast<int>(t.size()) > l.fields ? t[l.fields].column : t.back().column;
    fail(column, fmt::format("result row has {} fields, expected {} ({})", t.size(), l.fields, l.names));
  }
  NcclTestsRow r;
  r.line = line_;
  const auto size = to_number<long long>(t[l.size].text);
  if (!size || *size < 0) fail(t[l.size].column, fmt::format("size (B): expected a whole number of bytes, got '{}'", t[l.size].text));
  r.size = sim::Bytes(static_cast<double>(*size));
  if (l.count >= 0) {
    const auto count = to_number<long long>(t[l.count].text);
    if (!count || *count < 0) fail(t[l.count].column, fmt::format("count (elements): expected a whole number, got '{}'", t[l.count].text));
    r.count = *count;
  }
  r.type = std::string(t[l.type].text);
  r.redop = std::string(t[l.redop].text);
  if (l.root >= 0) {
    // nccl-tests prints -1 for "no root"; anything else is a rank index.
    const auto root = to_number<long long>(t[l.root].text);
    if (!root || *root < -1 || *root > 1'000'000)
      fail(t[l.root].column, fmt::format("root: expected -1 or a rank index, got '{}'", t[l.root].text));
    r.root = static_cast<int>(*root);
  }
  r.out_of_place = *sample(t, l.groups[0], false);
  r.in_place = sample(t, l.groups[1], true);
  if (r.out_of_place.time.count() <= 0.0) fail(t[l.groups[0].time].column, "time (us): must be positive");
  log_.rows.push_back(std::move(r));
}

// From the table alone: size/count says whether size counts all ranks' data (gather-types),
// redop says whether it reduces, root whether it is rooted. all_gather and all_to_all print
// the same shape; "gather-type" is read as all_gather.
std::optional<Collective> infer_collective(const NcclTestsLog& log) {
  if (log.rows.empty()) return std::nullopt;
  const NcclTestsRow& r = log.rows.front();
  const bool reduces = r.redop != "none";
  if (r.root && *r.root >= 0) return reduces ? Collective::reduce : Collective::broadcast;
  const auto type_size = input::dtype_size(r.type);
  bool per_rank = true;  // size == count × type size
  if (type_size && r.count > 0) per_rank = r.size.count() <= 1.5 * r.count * *type_size;
  if (reduces) return per_rank ? Collective::all_reduce : Collective::reduce_scatter;
  return per_rank ? Collective::send_recv : Collective::all_gather;
}

NcclTestsLog Reader::finish(int last_line) {
  if (log_.rows.empty()) {
    throw input::InputError(log_.source, last_line, 0,
                          layout_ ? "the result table has no rows"
                                  : "no nccl-tests result table found (expected a '# size count type "
                                    "redop root time ...' header and rows of numbers)");
  }
  if (from_banner_) log_.collective = from_banner_, log_.collective_from = "banner";
  else if (from_command_) log_.collective = from_command_, log_.collective_from = "command";
  else if ((log_.collective = infer_collective(log_))) log_.collective_from = "table";
  return std::move(log_);
}

}  // namespace

std::optional<int> NcclTestsLog::rank_count() const {
  if (!ranks.empty()) return static_cast<int>(ranks.size());
  if (n_gpus) return *n_gpus * n_threads.value_or(1);
  return std::nullopt;
}

int NcclTestsLog::host_count() const {
  std::set<std::string> hosts;
  for (const auto& r : ranks) hosts.insert(r.host);
  return static_cast<int>(hosts.size());
}

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& source) {
  Reader reader(source);
  input::Lines lines(text, source);
  while (const auto line = lines.next()) reader.line(line->number, line->text);
  return reader.finish(lines.count());
}

NcclTestsLog read_nccl_tests_log(const std::string& path) {
  return parse_nccl_tests_log(input::read_file(path), path);
}

bool looks_like_nccl_tests_log(std::string_view text) {
  input::Lines lines(text, "");
  for (int i = 0; i < 200; ++i) {
    const auto line = lines.next();
    if (!line) break;
    const auto t = tokenize(line->text);
    if (t.size() >= 2 && t[0].text.starts_with('#')) {
      const std::string_view second = t[0].text == "#" ? t[1].text : t[0].text.substr(1);
      if (second == "nThread" || (second == "size" && line->text.find("count") != std::string::npos)) return true;
    }
  }
  return false;
}

}  // namespace wiresim::calibrate
