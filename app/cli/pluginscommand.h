// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"

namespace replhost::cli {

// `replhost-cli plugins` and `replhost-cli languages`: what the server found when it started.
//   plugins     the directories it searched, in order, with how many plugin files each held
//               (or that it does not exist); then every plugin file: id, state, the origin of
//               its directory, the file, and why it was refused or its runtime is missing
//               (GET /v1/plugins)
//   languages   the languages the loaded plugins provide: id, name, whether it can run here,
//               the runtime's version, aliases, and what to install when it cannot
//               (GET /v1/languages); a note on stderr when some plugin files were refused
// With --json, the server's document. Threading: the main thread.
class PluginsCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<ExitStatus> plugins();
    Result<ExitStatus> languages();
};

} // namespace replhost::cli
