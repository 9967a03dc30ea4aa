// SPDX-License-Identifier: Apache-2.0
#include "languageinfo.h"

#include "languagenames.h"

#include <array>

namespace replhost::kernel {

LanguageInfo LanguageInfo::forLanguage(const std::string &language)
{
    static const std::array<LanguageInfo, 7> known = {{
        {"python", "", "text/x-python", ".py", "python3", {{"name", "ipython"}, {"version", 3}}},
        {"javascript", "", "application/javascript", ".js", "javascript", "javascript"},
        {"typescript", "", "text/typescript", ".ts", "typescript", "typescript"},
        {"perl", "", "text/x-perl", ".pl", "perl", "perl"},
        {"java", "", "text/x-java", ".java", "java", "text/x-java"},
        {"go", "", "text/x-go", ".go", "go", "go"},
        {"bash", "", "text/x-sh", ".sh", "bash", "shell"},
    }};
    for (LanguageInfo info : known) {
        if (info.id == language) {
            info.displayName = cli::languageDisplayName(language);
            return info;
        }
    }
    return {language, cli::languageDisplayName(language), "text/plain", ".txt", "text", nlohmann::json()};
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
