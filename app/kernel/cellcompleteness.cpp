// SPDX-License-Identifier: Apache-2.0
#include "cellcompleteness.h"

#include <vector>

namespace replhost::kernel {

namespace {

struct Syntax {
    const char *lineComment = "//";
    bool blockComments = true;       // /* … */
    std::string quotes = "'\"";      // quote characters that open a string
    bool tripleQuotes = false;       // Python's ''' and """, Java's text blocks """
    std::string rawQuotes;           // quotes whose strings have no escapes (Go's `, Bash's ')
    bool stringsSpanLines = false;   // a newline inside '…' or "…" is still the string
    bool backslashContinues = false; // a line ending in '\' continues on the next
    bool strayCloserIsInvalid = true;
};

Syntax syntaxOf(const std::string &language)
{
    Syntax s;
    if (language == "python") {
        s.lineComment = "#";
        s.blockComments = false;
        s.tripleQuotes = true;
        s.backslashContinues = true;
    } else if (language == "javascript" || language == "typescript") {
        s.quotes = "'\"`";
        s.rawQuotes = "";
    } else if (language == "java") {
        s.tripleQuotes = true;
    } else if (language == "go") {
        s.quotes = "'\"`";
        s.rawQuotes = "`";
    } else if (language == "perl") {
        s.lineComment = "#";
        s.blockComments = false;
        s.stringsSpanLines = true;
    } else if (language == "bash") {
        s.lineComment = "#";
        s.blockComments = false;
        s.rawQuotes = "'";
        s.stringsSpanLines = true;
        s.backslashContinues = true;
        // case patterns end in a lone ')'
        s.strayCloserIsInvalid = false;
    }
    return s;
}

bool startsWith(const std::string &code, size_t at, const char *text)
{
    return code.compare(at, std::char_traits<char>::length(text), text) == 0;
}

char closerOf(char opener)
{
    return opener == '(' ? ')' : opener == '[' ? ']' : '}';
}

std::string leadingSpace(const std::string &line)
{
    return line.substr(0, line.find_first_not_of(" \t"));
}

// Bash's compound commands: an opening word at the start of a command needs its closing word.
class ShellBlocks {
public:
    void word(const std::string &text)
    {
        if (!m_commandPosition && text != "done" && text != "fi" && text != "esac") {
            return;
        }
        if (text == "if" || text == "case" || text == "do")
            ++m_depth;
        else if ((text == "fi" || text == "esac" || text == "done") && m_depth > 0)
            --m_depth;
        m_commandPosition = text == "then" || text == "do" || text == "else" || text == "elif" || text == "if"
                || text == "while" || text == "until" || text == "!" || text == "time";
    }
    void separator() { m_commandPosition = true; }
    int depth() const { return m_depth; }

private:
    bool m_commandPosition = true;
    int m_depth = 0;
};

bool isWordChar(char c)
{
    return c != ' ' && c != '\t' && c != '\n' && c != ';' && c != '&' && c != '|' && c != '(' && c != ')'
            && c != '{' && c != '}' && c != '<' && c != '>';
}

} // namespace

const char *CellCompleteness::name(Status status)
{
    switch (status) {
    case Status::Complete: return "complete";
    case Status::Incomplete: return "incomplete";
    case Status::Invalid: return "invalid";
    }
    return "unknown";
}

CellCompleteness::Verdict CellCompleteness::judge(const std::string &language, const std::string &code)
{
    const Syntax syntax = syntaxOf(language);
    const bool shell = language == "bash";
    std::vector<char> brackets;
    std::string quote;  // the open string's delimiter, empty outside strings
    bool inBlockComment = false;
    char lastCode = 0;  // the last non-blank character outside comments
    std::string word;
    ShellBlocks blocks;
    bool invalid = false;

    const auto endWord = [&] {
        if (shell && !word.empty())
            blocks.word(word);
        word.clear();
    };

    for (size_t i = 0; i < code.size(); ++i) {
        const char c = code[i];
        if (inBlockComment) {
            if (startsWith(code, i, "*/")) {
                inBlockComment = false;
                ++i;
            }
            continue;
        }
        if (!quote.empty()) {
            const bool raw = quote.size() == 1 && syntax.rawQuotes.find(quote[0]) != std::string::npos;
            if (c == '\\' && !raw) {
                ++i;
                continue;
            }
            if (startsWith(code, i, quote.c_str())) {
                i += quote.size() - 1;
                quote.clear();
                lastCode = c;
                continue;
            }
            if (c == '\n' && quote.size() == 1 && !syntax.stringsSpanLines && quote != "`")
                invalid = true;
            continue;
        }
        if (startsWith(code, i, syntax.lineComment)
            && (!shell || i == 0 || std::string(" \t\n;&|(").find(code[i - 1]) != std::string::npos)
            && !(language == "perl" && i > 0 && code[i - 1] == '$')) {
            endWord();
            while (i + 1 < code.size() && code[i + 1] != '\n')
                ++i;
            continue;
        }
        if (syntax.blockComments && startsWith(code, i, "/*")) {
            inBlockComment = true;
            ++i;
            continue;
        }
        if (syntax.quotes.find(c) != std::string::npos) {
            endWord();
            const std::string triple(3, c);
            if (syntax.tripleQuotes && c == '"' && startsWith(code, i, triple.c_str())) {
                quote = triple;
                i += 2;
            } else if (syntax.tripleQuotes && language == "python" && startsWith(code, i, triple.c_str())) {
                quote = triple;
                i += 2;
            } else {
                quote = std::string(1, c);
            }
            lastCode = c;
            continue;
        }
        if (shell && isWordChar(c)) {
            word += c;
        } else {
            endWord();
            if (shell && (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == '{'))
                blocks.separator();
        }
        if (c == '(' || c == '[' || c == '{') {
            brackets.push_back(c);
        } else if (c == ')' || c == ']' || c == '}') {
            if (!brackets.empty() && closerOf(brackets.back()) == c)
                brackets.pop_back();
            else if (syntax.strayCloserIsInvalid)
                invalid = true;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            lastCode = c;
    }
    endWord();

    if (invalid)
        return {Status::Invalid, {}};

    const size_t lastLineStart = code.find_last_of('\n') == std::string::npos ? 0 : code.find_last_of('\n') + 1;
    const std::string lastLine = code.substr(lastLineStart);
    const std::string lastIndent = leadingSpace(lastLine);
    const bool python = language == "python";
    if (!quote.empty() || inBlockComment)
        return {Status::Incomplete, {}};
    if (!brackets.empty())
        return {Status::Incomplete, python ? lastIndent + "    " : std::string()};
    if (syntax.backslashContinues && !code.empty() && code.back() == '\\')
        return {Status::Incomplete, lastIndent};
    if (shell) {
        if (blocks.depth() > 0)
            return {Status::Incomplete, "  "};
        const size_t end = code.find_last_not_of(" \t\n");
        if (end != std::string::npos && (code[end] == '|' || (end > 0 && code.compare(end - 1, 2, "&&") == 0)))
            return {Status::Incomplete, {}};
    }
    if (python) {
        if (lastCode == ':')
            return {Status::Incomplete, lastIndent + "    "};
        // An indented block ends with an empty line.
        const bool multiline = code.find('\n') != std::string::npos;
        if (multiline && !lastIndent.empty() && lastLine.find_first_not_of(" \t") != std::string::npos)
            return {Status::Incomplete, lastIndent};
    }
    return {Status::Complete, {}};
}

} // namespace replhost::kernel
