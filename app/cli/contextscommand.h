// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"

namespace replhost::cli {

// `replhost-cli contexts ls|new|rm|restart`: the contexts of the workspace.
//   ls [-l LANGUAGE]                      a table, oldest first (--json: the server's array)
//   new -l LANGUAGE [--name N] [--cwd DIR] [-e KEY=VALUE]...
//                                         prints the new context's id (--json: the context)
//   rm ID...                              deletes contexts, stopping at the first refusal
//   restart ID                            a fresh interpreter, same id (--json: the context)
//   output ID [--after SEQ] [--follow]    what the interpreter wrote between runs, each stream
//                                         to its own fd (--json: the entries and last_seq)
class ContextsCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<ExitStatus> list();
    Result<ExitStatus> create();
    Result<ExitStatus> remove();
    Result<ExitStatus> restart();
    Result<ExitStatus> output();

};

} // namespace replhost::cli
