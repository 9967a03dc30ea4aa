// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"

namespace replhost::cli {

// `replhost-cli env show|set|unset|clear`: the workspace's env layer, or a context's with
// --context ID. Changes reach the next run of every context they apply to.
//   show [--effective]    KEY=value lines, then "unset KEY" lines; --effective (with --context)
//                         prints the environment the context's next run starts from
//   set KEY=VALUE...      sets keys in the layer
//   unset KEY...          hides keys, also from the layers below (and the server's environment)
//   clear KEY...          drops keys from the layer, so the layers below show through again
// With --json every action prints the layer as the server returns it.
class EnvCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<ExitStatus> show(const std::string &path);
    Result<ExitStatus> change(const std::string &path);

};

} // namespace replhost::cli
