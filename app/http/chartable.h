// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QtGlobal>

#include <array>
#include <string_view>

namespace replhost::http {

// A set of bytes for the grammars of HTTP (RFC 9110's tchar, RFC 3986's URL characters), as a
// table looked up by the byte: the ASCII letters and digits, plus `extra`. Built at compile time.
class CharTable {
public:
    constexpr explicit CharTable(std::string_view extra)
    {
        for (int c = 'a'; c <= 'z'; ++c)
            m_member[c] = true;
        for (int c = 'A'; c <= 'Z'; ++c)
            m_member[c] = true;
        for (int c = '0'; c <= '9'; ++c)
            m_member[c] = true;
        for (const char c : extra)
            m_member[uchar(c)] = true;
    }

    constexpr bool contains(char c) const { return m_member[uchar(c)]; }

private:
    std::array<bool, 256> m_member{};
};

} // namespace replhost::http
