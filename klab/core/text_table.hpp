#pragma once
// A table of strings as text (columns padded to their widest cell, two spaces apart) or as a
// markdown table: the results tables of the CLI and `klab report`, and the memory tables.
#include <string>
#include <vector>

namespace klab {

/// rows[0] is the header. right[i]: column i right-aligned (text: padded on the left; markdown:
/// `---:`). A left-aligned last column is not padded.
std::string render_table(const std::vector<std::vector<std::string>>& rows, bool markdown,
                         const std::vector<bool>& right);

}  // namespace klab
