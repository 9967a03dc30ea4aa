// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace replhost::cli {

// Rows of text printed in aligned columns (two spaces apart, the last column not padded), the
// way `ls -l` or `ps` print, for people; --json is the format for programs. Widths count UTF-8
// characters, not bytes.
class TextTable {
public:
    explicit TextTable(std::vector<std::string> header);

    void addRow(std::vector<std::string> row);
    std::string text() const;

private:
    std::vector<std::vector<std::string>> m_rows;  // the header first
};

} // namespace replhost::cli
