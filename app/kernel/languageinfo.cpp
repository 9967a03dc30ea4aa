// SPDX-License-Identifier: Apache-2.0
#include "languageinfo.h"

#include <array>
#include <cctype>

namespace replhost::kernel {

LanguageInfo LanguageInfo::forLanguage(const std::string &language)
{
    static const std::array<LanguageInfo, 6> known = {{
        {"python", "Python", "text/x-python", ".py", "python3", {{"name", "ipython"}, {"version", 3}}},
        {"javascript", "JavaScript", "application/javascript", ".js", "javascript", "javascript"},
        {"perl", "Perl", "text/x-perl", ".pl", "perl", "perl"},
        {"java", "Java", "text/x-java", ".java", "java", "text/x-java"},
        {"go", "Go", "text/x-go", ".go", "go", "go"},
        {"bash", "Bash", "text/x-sh", ".sh", "bash", "shell"},
    }};
    for (const LanguageInfo &info : known) {
        if (info.id == language)
            return info;
    }
    std::string displayName = language;
    if (!displayName.empty())
        displayName[0] = char(std::toupper(static_cast<unsigned char>(displayName[0])));
    return {language, displayName, "text/plain", ".txt", "text", nlohmann::json()};
}

nlohmann::json LanguageInfo::toJupyter(const std::string &version) const
{
    return {
        {"name", id},
        {"version", version},
        {"mimetype", mimetype},
        {"file_extension", fileExtension},
        {"pygments_lexer", pygmentsLexer},
        {"codemirror_mode", codemirrorMode},
    };
}

} // namespace replhost::kernel
