// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace replhost::cli {

// What `run` writes of a run: its streams as they come, and its displays, some of which change.
// On a terminal a display that is updated (an update event with its display_id) is rewritten
// where it stands, as a progress line is, and clear_output clears what the run has shown; both
// move the cursor back with ANSI sequences, and only over rows still on the screen. Where that
// cannot be done (something was written after the display, or it scrolled away), and whenever
// stdout is not a terminal, an update is written as a new line and a clear is left out, so a
// pipe or a file keeps every state in order.
//
// The cursor is followed by counting what is written (line ends, wrapping at the terminal's
// width, escape sequences taking no room); a character that a terminal shows two columns wide
// counts one. Called from one thread (the one that reads the run's stream).
class RunOutput {
public:
    struct Size {
        int rows = 0;     // 0: unknown (taken as 24)
        int columns = 0;  // 0: unknown (no wrapping is counted)
    };
    using Writer = std::function<void(int fd, std::string_view text)>;
    using SizeOf = std::function<Size()>;

    // `terminal`: stdout is a terminal. `write` puts text on fd 1 or 2; `size` tells the
    // terminal's size at the moment (it may change while the run goes on).
    RunOutput(bool terminal, Writer write, SizeOf size);
    // On replhost-cli's own stdout and stderr (Console), a terminal when isatty(1).
    static RunOutput forConsole();

    void out(std::string_view text);
    void err(std::string_view text);
    // A display's text (its text/plain, without the line end it gets here). `displayId` may be
    // empty; `update`: it replaces the display of that id.
    void display(const std::string &displayId, std::string_view text, bool update);
    // clear_output: the run's output so far goes; with `wait`, once its next output arrives.
    void clear(bool wait);
    // Something else writes to the terminal now (a question's prompt, and the answer typed after
    // it, which ends with a line end): what came before it is not rewritten.
    void interruptedByInput();

private:
    struct Position {
        long long row = 0;
        int column = 0;
    };

    void write(int fd, std::string_view text);
    void follow(std::string_view text);
    // Moves the cursor back to `to` and erases from there to the end of the screen; false,
    // with nothing written, when `to` is no longer on the screen.
    bool rewind(const Position &to);
    void clearNow();

    bool m_terminal = false;
    bool m_errToTerminal = false;
    Writer m_write;
    SizeOf m_size;
    Position m_cursor;
    // Where the run's output begins (after the last clear, or the last question).
    Position m_anchor;
    bool m_anchorAtNextWrite = false;
    // The display written last, when nothing has been written after it: its id and start.
    std::string m_lastDisplayId;
    Position m_lastDisplayStart;
    bool m_clearPending = false;
    // Inside an escape sequence that a write left unfinished.
    enum class Escape { None, Start, Csi, Osc } m_escape = Escape::None;
};

} // namespace replhost::cli
