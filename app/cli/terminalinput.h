// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace replhost::cli {

// Answers a run's questions from the terminal that is the client's standard input: ask() writes
// the prompt to stdout and reads one line on a thread of its own, with echo off for a password,
// and hands it (without its line end) to `answer`, or nothing at the end of input (Ctrl-D). The
// main thread keeps reading the run's stream meanwhile, so an interrupt or a timeout that ends
// the run is seen there, and cancel() then ends the read: the terminal gets its echo back and
// the line typed so far is dropped.
//
// Threading: ask() and cancel() from one thread (the one that reads the stream); `answer` runs on
// the reader's thread, at most once per ask(). Destruction cancels.
class TerminalInput {
public:
    using Answer = std::function<void(std::optional<std::string> line)>;

    // Whether standard input is a terminal, so that someone there can answer.
    static bool available();

    TerminalInput() = default;
    ~TerminalInput();
    TerminalInput(const TerminalInput &) = delete;
    TerminalInput &operator=(const TerminalInput &) = delete;

    // Ends a read still in progress, then starts reading the answer to `prompt`.
    void ask(const std::string &prompt, bool password, Answer answer);
    // Ends a read in progress, if any, and waits for its thread.
    void cancel();

private:
    void read(std::string prompt, bool password, const Answer &answer, int cancelFd);

    std::thread m_thread;
    int m_cancelFd = -1;  // the write end of the pipe the reader polls beside the terminal
};

} // namespace replhost::cli
