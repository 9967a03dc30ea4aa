// SPDX-License-Identifier: Apache-2.0
#include "texttable.h"

#include <algorithm>

namespace replhost::cli {

namespace {

size_t displayWidth(const std::string &text)
{
    // UTF-8 continuation bytes (10xxxxxx) do not start a character.
    return size_t(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

} // namespace

TextTable::TextTable(std::vector<std::string> header)
{
    m_rows.push_back(std::move(header));
}

void TextTable::addRow(std::vector<std::string> row)
{
    row.resize(m_rows.front().size());
    m_rows.push_back(std::move(row));
}

std::string TextTable::text() const
{
    std::vector<size_t> widths(m_rows.front().size(), 0);
    for (const auto &row : m_rows) {
        for (size_t column = 0; column < row.size(); ++column)
            widths[column] = std::max(widths[column], displayWidth(row[column]));
    }
    std::string text;
    for (const auto &row : m_rows) {
        std::string line;
        for (size_t column = 0; column < row.size(); ++column) {
            line += row[column];
            if (column + 1 < row.size())
                line.append(widths[column] - displayWidth(row[column]) + 2, ' ');
        }
        line.erase(line.find_last_not_of(' ') + 1);
        text += line + '\n';
    }
    return text;
}

} // namespace replhost::cli
