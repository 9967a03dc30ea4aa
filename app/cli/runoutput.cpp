// SPDX-License-Identifier: Apache-2.0
#include "runoutput.h"

#include "console.h"

#include <sys/ioctl.h>
#include <unistd.h>

namespace replhost::cli {

namespace {

constexpr int kDefaultRows = 24;

} // namespace

RunOutput::RunOutput(bool terminal, Writer write, SizeOf size)
    : m_terminal(terminal), m_write(std::move(write)), m_size(std::move(size))
{
}

RunOutput RunOutput::forConsole()
{
    RunOutput output(::isatty(STDOUT_FILENO) == 1,
                     [](int fd, std::string_view text) {
                         if (fd == STDERR_FILENO)
                             Console::err(text);
                         else
                             Console::out(text);
                     },
                     [] {
                         winsize size{};
                         if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0)
                             return Size{};
                         return Size{size.ws_row, size.ws_col};
                     });
    // stderr moves the same cursor only when it goes to the terminal too.
    output.m_errToTerminal = output.m_terminal && ::isatty(STDERR_FILENO) == 1;
    return output;
}

void RunOutput::out(std::string_view text)
{
    write(STDOUT_FILENO, text);
}

void RunOutput::err(std::string_view text)
{
    write(STDERR_FILENO, text);
}

void RunOutput::display(const std::string &displayId, std::string_view text, bool update)
{
    std::string line(text);
    if (line.empty() || line.back() != '\n')
        line += '\n';
    if (update && m_terminal && !displayId.empty() && displayId == m_lastDisplayId && !m_clearPending
        && rewind(m_lastDisplayStart)) {
        m_write(STDOUT_FILENO, line);
        follow(line);
        return;  // still the last display, from the same start
    }
    write(STDOUT_FILENO, line);  // which keeps where it began in m_lastDisplayStart
    m_lastDisplayId = displayId;
}

void RunOutput::clear(bool wait)
{
    if (!m_terminal)
        return;
    if (wait)
        m_clearPending = true;
    else
        clearNow();
}

void RunOutput::interruptedByInput()
{
    m_lastDisplayId.clear();
    // The answer typed ends with a line end; where the prompt began is not known.
    m_cursor.column = 0;
    m_anchorAtNextWrite = true;
}

void RunOutput::write(int fd, std::string_view text)
{
    if (m_clearPending) {
        m_clearPending = false;
        clearNow();
    }
    if (m_anchorAtNextWrite) {
        m_anchorAtNextWrite = false;
        m_anchor = m_cursor;
    }
    m_lastDisplayId.clear();
    const Position before = m_cursor;
    m_write(fd, text);
    if (m_terminal && (fd == STDOUT_FILENO || m_errToTerminal))
        follow(text);
    m_lastDisplayStart = before;
}

void RunOutput::follow(std::string_view text)
{
    const int columns = m_size().columns;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        // Escape sequences (colours and the like) take no column: CSI ends with a byte from @
        // to ~, OSC with BEL or ESC \, anything else after ESC is one byte.
        if (m_escape == Escape::Start) {
            m_escape = c == '[' ? Escape::Csi : c == ']' ? Escape::Osc : Escape::None;
            continue;
        }
        if (m_escape == Escape::Csi) {
            if (byte >= 0x40 && byte <= 0x7e)
                m_escape = Escape::None;
            continue;
        }
        if (m_escape == Escape::Osc) {
            if (c == '\a')
                m_escape = Escape::None;
            else if (c == '\x1b')
                m_escape = Escape::Start;
            continue;
        }
        if (c == '\x1b') {
            m_escape = Escape::Start;
        } else if (c == '\n') {
            ++m_cursor.row;
            m_cursor.column = 0;
        } else if (c == '\r') {
            m_cursor.column = 0;
        } else if (c == '\t') {
            m_cursor.column = (m_cursor.column / 8 + 1) * 8;
            if (columns > 0 && m_cursor.column > columns)
                m_cursor.column = columns;
        } else if (byte < 0x20 || byte == 0x7f || (byte & 0xc0) == 0x80) {
            // Control characters and the continuation bytes of UTF-8 take no column.
        } else {
            // A terminal wraps when a character comes after the last column is filled.
            if (columns > 0 && m_cursor.column >= columns) {
                ++m_cursor.row;
                m_cursor.column = 0;
            }
            ++m_cursor.column;
        }
    }
}

bool RunOutput::rewind(const Position &to)
{
    const Size size = m_size();
    const long long up = m_cursor.row - to.row;
    if (up < 0 || up >= (size.rows > 0 ? size.rows : kDefaultRows))
        return false;
    std::string moves;
    if (up > 0)
        moves += "\x1b[" + std::to_string(up) + "A";
    moves += '\r';
    if (to.column > 0)
        moves += "\x1b[" + std::to_string(to.column) + "C";
    moves += "\x1b[J";
    m_write(STDOUT_FILENO, moves);
    m_cursor = to;
    return true;
}

void RunOutput::clearNow()
{
    m_lastDisplayId.clear();
    if (!rewind(m_anchor)) {
        // More than the screen holds: everything on it is the run's.
        m_write(STDOUT_FILENO, "\x1b[H\x1b[J");
        m_cursor = Position{m_cursor.row, 0};
    }
    m_anchor = m_cursor;
}

} // namespace replhost::cli
