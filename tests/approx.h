// Relative comparison for the tests: doctest's Approx with its scale set to (almost) 0.
//
// doctest's Approx accepts |a - v| < epsilon x (scale + max(|a|, |v|)) with scale 1 by default,
// so for quantities far below 1 (times in seconds, 1e-6 to 1e-3) its epsilon acts as an
// absolute tolerance in seconds: Approx(500e-9) accepted 12 us, Approx(t).epsilon(0.01)
// accepted anything within 10 ms. rel_approx(v) is relative at every magnitude; two zeros
// compare equal. (A global name: the tools tests have a function called wiresim.)
//
//   CHECK(time.count() == rel_approx(2.5e-6).epsilon(0.01));   // within 1 %
#pragma once

#include <limits>

#include <doctest/doctest.h>

inline doctest::Approx rel_approx(double value) {
  return doctest::Approx(value).scale(std::numeric_limits<double>::min());
}
