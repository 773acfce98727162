// Units: sizes, durations and rates as distinct value types.
//
// Bytes, Seconds and BytesPerSec each wrap a double and allow only the arithmetic
// that keeps units straight: Bytes / BytesPerSec -> Seconds, BytesPerSec * Seconds
// -> Bytes, Bytes / Bytes -> double. Bits exist only in the parser: "400Gb/s" is
// stored as 5e10 bytes per second. GB = 1e9 bytes, GiB = 2^30 bytes. A rate is per
// direction unless the text says "-bidir" (then it is halved on the way in).
//
//   const BytesPerSec nic = parse_rate("400Gb/s");   // 5.0e10 B/s
//   const Seconds t = parse_size("1GiB") / nic;       // 21.47 ms
//   fmt::print("{}", format_time(t));                 // "21.47 ms"
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace wiresim::sim {

class Seconds {
 public:
  constexpr Seconds() = default;
  constexpr explicit Seconds(double s) : v_(s) {}
  constexpr double count() const { return v_; }
  constexpr double us() const { return v_ * 1e6; }
  constexpr double ms() const { return v_ * 1e3; }
  constexpr Seconds operator+(Seconds o) const { return Seconds{v_ + o.v_}; }
  constexpr Seconds operator-(Seconds o) const { return Seconds{v_ - o.v_}; }
  constexpr Seconds operator*(double k) const { return Seconds{v_ * k}; }
  constexpr Seconds operator/(double k) const { return Seconds{v_ / k}; }
  constexpr double operator/(Seconds o) const { return v_ / o.v_; }
  constexpr Seconds& operator+=(Seconds o) { v_ += o.v_; return *this; }
  constexpr Seconds& operator-=(Seconds o) { v_ -= o.v_; return *this; }
  constexpr auto operator<=>(const Seconds&) const = default;

 private:
  double v_ = 0.0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(double b) : v_(b) {}
  constexpr double count() const { return v_; }
  constexpr Bytes operator+(Bytes o) const { return Bytes{v_ + o.v_}; }
  constexpr Bytes operator-(Bytes o) const { return Bytes{v_ - o.v_}; }
  constexpr Bytes operator*(double k) const { return Bytes{v_ * k}; }
  constexpr Bytes operator/(double k) const { return Bytes{v_ / k}; }
  constexpr double operator/(Bytes o) const { return v_ / o.v_; }
  constexpr Bytes& operator+=(Bytes o) { v_ += o.v_; return *this; }
  constexpr Bytes& operator-=(Bytes o) { v_ -= o.v_; return *this; }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  double v_ = 0.0;
};

class BytesPerSec {
 public:
  constexpr BytesPerSec() = default;
  constexpr explicit BytesPerSec(double r) : v_(r) {}
  // "No limit": the rate cap of a transfer that only its links bound.
  static constexpr BytesPerSec unlimited() {
    return BytesPerSec{std::numeric_limits<double>::infinity()};
  }
  constexpr bool is_unlimited() const { return v_ == std::numeric_limits<double>::infinity(); }
  constexpr double count() const { return v_; }
  constexpr double gbps() const { return v_ / 1e9; }  // GB/s, GB = 1e9 B
  constexpr BytesPerSec operator+(BytesPerSec o) const { return BytesPerSec{v_ + o.v_}; }
  constexpr BytesPerSec operator-(BytesPerSec o) const { return BytesPerSec{v_ - o.v_}; }
  constexpr BytesPerSec operator*(double k) const { return BytesPerSec{v_ * k}; }
  constexpr BytesPerSec operator/(double k) const { return BytesPerSec{v_ / k}; }
  constexpr double operator/(BytesPerSec o) const { return v_ / o.v_; }
  constexpr BytesPerSec& operator+=(BytesPerSec o) { v_ += o.v_; return *this; }
  constexpr BytesPerSec& operator-=(BytesPerSec o) { v_ -= o.v_; return *this; }
  constexpr auto operator<=>(const BytesPerSec&) const = default;

 private:
  double v_ = 0.0;
};

constexpr Seconds operator/(Bytes b, BytesPerSec r) { return Seconds{b.count() / r.count()}; }
constexpr Bytes operator*(BytesPerSec r, Seconds t) { return Bytes{r.count() * t.count()}; }
constexpr Bytes operator*(Seconds t, BytesPerSec r) { return r * t; }
constexpr BytesPerSec operator/(Bytes b, Seconds t) { return BytesPerSec{b.count() / t.count()}; }
constexpr Bytes operator*(double k, Bytes b) { return b * k; }
constexpr Seconds operator*(double k, Seconds s) { return s * k; }
constexpr BytesPerSec operator*(double k, BytesPerSec r) { return r * k; }

// Simulated time in the event queue: integer picoseconds, so that equal times compare
// equal and runs are reproducible bit for bit. int64 picoseconds span 106 days.
using SimTime = std::int64_t;
constexpr SimTime kPicosPerSecond = 1'000'000'000'000;
// Rounds up so that an event never fires before its exact real-valued time.
SimTime to_sim_time(Seconds s);
constexpr Seconds to_seconds(SimTime t) { return Seconds{static_cast<double>(t) / 1e12}; }

// A rate as written in a file: per direction, or a bidirectional total that was halved.
struct ParsedRate {
  BytesPerSec per_direction;
  bool was_bidirectional = false;
};

// Parsers take text with a unit and throw std::invalid_argument with a message that
// says what was expected (callers that know a file position wrap it in InputError).
//   parse_size:  "8B" "4KiB" "64MB" "1GiB" "1.5GB" ("B" required; K/M/G/T = 1e3.., Ki/Mi/Gi/Ti = 2^10..)
//   parse_rate:  "450GB/s" "400Gb/s" "25GBps" "900GB/s-bidir" "1.8TB/s-bidir"
//   parse_time:  "500ns" "1.5us" "1.5µs" "2ms" "3s" "100ps"
Bytes parse_size(std::string_view text);
ParsedRate parse_rate_text(std::string_view text);
BytesPerSec parse_rate(std::string_view text);  // per direction; "-bidir" halves
Seconds parse_time(std::string_view text);

// Human-readable output with units: "8 B", "4 KiB", "1.5 GiB" (binary prefixes for sizes,
// as nccl-tests users expect powers of two), "450 GB/s" (decimal GB), "1.50 us".
std::string format_size(Bytes b);
std::string format_rate(BytesPerSec r);
std::string format_time(Seconds s);

}  // namespace wiresim::sim
