// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"

namespace replhost::cli {

// `replhost-cli history`: the runs of one context, newest first, a page at a time.
//   history --context ID | -l LANGUAGE  [-n|--limit N] [--before CURSOR] [--all]
// -l names the language's default context (its oldest, the one `run -l` uses). A page holds
// --limit runs (the server's default 50, at most 500); when older runs exist, stderr says which
// --before shows the next page; --all fetches every page. --json: the server's page
// ({"executions": [...], "next": cursor or null}), or with --all every run in one page.
class HistoryCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<std::string> contextId();

};

} // namespace replhost::cli
