// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"

namespace replhost::cli {

// `replhost-cli workspaces ls|new|rm|export|import|where`: the server's workspaces (what
// --workspace names).
//   ls                         name and directory of each (--json: the server's array)
//   new NAME [--directory DIR] creates one (--json: the workspace)
//   rm NAME [--purge]          deletes one with its contexts and history; --purge also deletes
//                              its directory
//   export NAME                its archive (tar: directory, contexts, env layers, history,
//                              snapshots) to stdout, never to a terminal
//   import FILE [--name NAME]  a new workspace from an archive ("-": stdin), named as it was
//                              or NAME; its contexts are dormant and restore on first use
//   where NAME                 the server (X-Replhost-Instance) that a request for NAME
//                              reaches: behind a router, the one that owns it
// Each request that names a workspace sends it as X-Replhost-Workspace, so a router places it.
class WorkspacesCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<ExitStatus> exportArchive();
    Result<ExitStatus> importArchive();
    Result<ExitStatus> where();
};

} // namespace replhost::cli
