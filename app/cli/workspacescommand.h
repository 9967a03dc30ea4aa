// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"

namespace replhost::cli {

// `replhost-cli workspaces ls|new|rm`: the server's workspaces (what --workspace names).
//   ls                         name and directory of each (--json: the server's array)
//   new NAME [--directory DIR] creates one (--json: the workspace)
//   rm NAME [--purge]          deletes one with its contexts and history; --purge also deletes
//                              its directory
class WorkspacesCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
};

} // namespace replhost::cli
