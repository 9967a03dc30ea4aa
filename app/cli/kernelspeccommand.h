// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"
#include "kernelspecs.h"

namespace replhost::cli {

// `replhost-cli kernelspec install|list|remove`: Jupyter kernelspecs that run replhost-kernel.
//   install [--user | --prefix DIR] [-l LANGUAGE]... [--context ID] [--kernel PATH]
//       One kernelspec replhost-<language> per language (display name "Python (replhost)"): the
//       -l ones, else every language the server has a runtime for. With --context, one kernelspec
//       bound to that context (replhost-<language>-<first 8 of the id>). --kernel: the
//       replhost-kernel to run (default: the one beside replhost-cli, else on PATH). --data-dir,
//       --workspace and --url given to replhost-cli are passed on to the kernel; a token never is
//       (the kernel reads it from the data dir or REPLHOST_TOKEN).
//   list [--user | --prefix DIR]      the replhost kernelspecs Jupyter finds
//   remove NAME... [--user | --prefix DIR]
// --json: {"installed"|"removed": [{"name", "directory"}]}, or list's array of kernelspecs.
class KernelspecCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<ExitStatus> install();
    Result<ExitStatus> list();
    Result<ExitStatus> remove();
    // The kernels directories this command works in: the one --user or --prefix names, else
    // Jupyter's search path.
    std::vector<std::string> directories() const;
    Result<std::vector<Kernelspecs::Spec>> specsToInstall(const std::string &kernel);
};

} // namespace replhost::cli
