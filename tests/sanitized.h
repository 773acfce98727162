// Whether this test binary is the sanitizer build (tools/sanitize.sh: clang with
// AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage hooks), where the
// program runs 6 to 17 times slower than in Release.
//
// The sanitizer suite is there to find memory and undefined-behaviour errors on every code
// path; the numbers are asserted by the plain (Release) suite, which CI runs first on the same
// commit. A few tests repeat one path over many data sets or many runs (a calibration per
// cluster, three runs of every scenario in two formats); under the sanitizers they take one
// instance of each path rather than all of them, and each says where it does so. Together
// they took CI past its 90 minutes on 2026-12-05 (sanitizer accuracy test 2,164 s, tools test
// 2,735 s against 126 s and 308 s in Release). The golden test's full `validate` took 1,091 s
// there on 2026-12-06 (38 s in Release, ~27 times): it runs 14 data sets there.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WIRESIM_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(WIRESIM_TEST_SANITIZED)
#define WIRESIM_TEST_SANITIZED 1
#endif

namespace wiresim_test {

#ifdef WIRESIM_TEST_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace wiresim_test
