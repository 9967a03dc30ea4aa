// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace replhost::kernel {

// Whether a console should run a cell now or read another line: the answer to Jupyter's
// is_complete_request. replhost's interpreters have no such question, so the kernel answers
// from the cell's text: a string, comment or bracket left open (or a closing bracket without its
// opening one), a line continued with a backslash, and per language what opens a block — a
// Python line ending in ':' (and an indented block, which ends with an empty line, as in
// IPython), a Bash if/case/for/while/until without its fi/esac/done.
//
// Threading: any; no state.
class CellCompleteness {
public:
    enum class Status { Complete, Incomplete, Invalid };
    struct Verdict {
        Status status = Status::Complete;
        std::string indent;  // for Incomplete: what the next line starts with
    };

    // `language` is a plugin id; an unknown one gets the brackets-and-quotes rules of C.
    static Verdict judge(const std::string &language, const std::string &code);

    static const char *name(Status status);
};

} // namespace replhost::kernel
