// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cctype>
#include <string>

namespace replhost::cli {

// How a language is named for people ("JavaScript" for "javascript"): the names of replhost's
// first-party plugins, known without asking a server; any other id capitalised.
inline std::string languageDisplayName(const std::string &id)
{
    static const std::pair<const char *, const char *> names[] = {
            {"python", "Python"}, {"javascript", "JavaScript"}, {"typescript", "TypeScript"},
            {"perl", "Perl"},     {"java", "Java"},             {"go", "Go"},
            {"bash", "Bash"},
    };
    for (const auto &[known, name] : names) {
        if (id == known)
            return name;
    }
    std::string name = id;
    if (!name.empty())
        name[0] = char(std::toupper(static_cast<unsigned char>(name[0])));
    return name;
}

} // namespace replhost::cli
