// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "command.h"
#include "runoutput.h"
#include "terminalinput.h"

#include <mutex>
#include <optional>
#include <string>

namespace replhost::cli {

// `replhost-cli run`: sends code to a context (--context) or to a language's default context
// (-l, or guessed from the -f file's extension) and follows the run's event stream, writing its
// stdout and stderr to the client's own as they arrive, results and displays as text on stdout,
// errors on stderr. A display that is updated is rewritten in place on a terminal and written
// again as a new line elsewhere, and clear_output clears the run's output on a terminal
// (RunOutput). Ctrl-C sends an interrupt for the execution (the run ends "interrupted", the
// context keeps its state); a second Ctrl-C stops waiting and leaves at once. The SIGINT pair that
// `timeout -s INT` sends (to the command, then to its group) is one Ctrl-C (InterruptWatcher).
//
// When standard input is a terminal (and the code did not come from it), the run may ask for
// input: the question's prompt is written to stdout and the line typed is the answer (without
// echo for a password; Ctrl-D is the end of input). Otherwise the run finds the end of input.
//
// The exit status is the run's: ok 0, error or aborted 1, timeout 124, interrupted 130. With
// --json, stdout gets only the finished execution document.
//
// Threading: execute() on the main thread; interrupts come from the InterruptWatcher's thread.
class RunCommand : public Command {
public:
    using Command::Command;

    Result<ExitStatus> execute() override;

private:
    Result<std::string> readCode() const;
    Result<std::string> languageOfFile(const std::string &path);
    void render(const SseEvent &event);
    void onInterrupt(int count);
    void sendInterrupt(const std::string &executionId);
    void sendAnswer(const std::string &executionId, const std::optional<std::string> &line);


    // Shared with the interrupt thread.
    std::mutex m_mutex;
    std::string m_executionId;
    bool m_interruptWanted = false;
    bool m_interruptSent = false;

    // Main thread only.
    std::string m_status;  // from the "done" event; empty until then
    bool m_stateLost = false;
    TerminalInput m_input;  // reads the answers to the run's questions
    RunOutput m_output = RunOutput::forConsole();
};

} // namespace replhost::cli
