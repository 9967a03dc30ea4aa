// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace replhost::kernel {

// What Jupyter frontends need to know about a replhost language to edit and highlight its cells:
// the kernel_info_reply's language_info (name, mimetype, file_extension, pygments_lexer,
// codemirror_mode) and the kernelspec's display name. Known for replhost's six first-party
// languages; any other plugin's language gets its id as the name and plain text elsewhere.
//
// Threading: any; the table is constant.
struct LanguageInfo {
    std::string id;            // the plugin id: "python"
    std::string displayName;   // "Python"
    std::string mimetype;      // "text/x-python"
    std::string fileExtension; // ".py"
    std::string pygmentsLexer; // "python3"
    nlohmann::json codemirrorMode;

    // `language` is a plugin id.
    static LanguageInfo forLanguage(const std::string &language);

    // language_info of the kernel_info_reply, with the interpreter's version.
    nlohmann::json toJupyter(const std::string &version) const;
};

} // namespace replhost::kernel
