// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"

namespace replhost::cli {

// `replhost-cli files ls|get|put`: files of the workspace directory. Paths on the server are
// relative to the workspace directory (or absolute inside it).
//   ls [PATH]             mode, size, modification time and name of each entry
//   get PATH [LOCAL]      the file's bytes to LOCAL (a file, or a directory to put it in), or to
//                         stdout when LOCAL is missing or "-"
//   put LOCAL PATH        uploads LOCAL ("-": standard input), creating missing directories
// Bytes travel untouched (binary files included). --json: ls and put print the server's
// document; get prints {"path", "size", "local"} and needs a LOCAL file.
class FilesCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<ExitStatus> list();
    Result<ExitStatus> get();
    Result<ExitStatus> put();

};

} // namespace replhost::cli
