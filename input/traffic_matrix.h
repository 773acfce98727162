// Traffic matrix: the bytes each rank of an all_to_all sends each other rank, as `coll
// --matrix M.csv` reads it: n lines of n sizes with units ("1MiB"), rank i's sends on line i,
// the one to rank j in column j; '#' starts a comment, blank lines are skipped. The
// diagonal (what a rank sends itself) is read and then set to 0.
//
//   # 2 ranks, rank 0 sends rank 1 twice what it gets back
//   0B, 2MiB
//   1MiB, 0B
//
//   std::vector<double> m = parse_traffic_matrix(text, "m.csv", 2);   // {0, 2097152, 1048576, 0}
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wiresim::input {

// Row-major n x n bytes; an InputError at the line and column of anything else.
std::vector<double> parse_traffic_matrix(std::string_view text, const std::string& source, int n);
std::vector<double> read_traffic_matrix(const std::string& path, int n);

}  // namespace wiresim::input
