// SPDX-License-Identifier: Apache-2.0
#include "commandline.h"

#include <algorithm>
#include <optional>

namespace replhost::cli {

namespace {

struct OptionSpec {
    std::string longName;
    char shortName = 0;
    bool takesValue = false;
    bool repeatable = false;
};

const std::vector<OptionSpec> &globalOptions()
{
    static const std::vector<OptionSpec> options{
            {"url", 0, true, false},     {"token", 0, true, false}, {"data-dir", 0, true, false},
            {"workspace", 'w', true, false}, {"json", 0, false, false}, {"help", 'h', false, false},
            {"version", 0, false, false},
    };
    return options;
}

// The options of each command ("run") or command and action ("contexts new").
const std::map<std::string, std::vector<OptionSpec>> &commandOptions()
{
    static const std::map<std::string, std::vector<OptionSpec>> options{
            {"run",
             {{"language", 'l', true, false},
              {"context", 0, true, false},
              {"file", 'f', true, false},
              {"timeout", 't', true, false},
              {"env", 'e', true, true}}},
            {"contexts ls", {{"language", 'l', true, false}}},
            {"contexts new",
             {{"language", 'l', true, false}, {"name", 0, true, false}, {"cwd", 0, true, false},
              {"env", 'e', true, true}}},
            {"contexts rm", {}},
            {"contexts output", {{"after", 0, true, false}, {"follow", 'F', false, false}}},
            {"contexts restart", {}},
            {"env show", {{"context", 0, true, false}, {"effective", 0, false, false}}},
            {"env set", {{"context", 0, true, false}}},
            {"env unset", {{"context", 0, true, false}}},
            {"env clear", {{"context", 0, true, false}}},
            {"files ls", {}},
            {"files get", {}},
            {"files put", {}},
            {"history",
             {{"context", 0, true, false},
              {"language", 'l', true, false},
              {"limit", 'n', true, false},
              {"before", 0, true, false},
              {"all", 0, false, false}}},
            {"kernelspec install",
             {{"user", 0, false, false},
              {"prefix", 0, true, false},
              {"language", 'l', true, true},
              {"context", 0, true, false},
              {"kernel", 0, true, false}}},
            {"kernelspec list", {{"user", 0, false, false}, {"prefix", 0, true, false}}},
            {"kernelspec remove", {{"user", 0, false, false}, {"prefix", 0, true, false}}},
            {"languages", {}},
            {"mcp", {}},
            {"plugins", {}},
            {"workspaces ls", {}},
            {"workspaces new", {{"directory", 0, true, false}}},
            {"workspaces rm", {{"purge", 0, false, false}}},
            {"workspaces export", {}},
            {"workspaces import", {{"name", 0, true, false}}},
            {"workspaces where", {}},
    };
    return options;
}

std::string join(const std::vector<std::string> &words, const std::string &separator)
{
    std::string text;
    for (const std::string &word : words) {
        if (!text.empty())
            text += separator;
        text += word;
    }
    return text;
}

std::optional<OptionSpec> findOption(const std::vector<OptionSpec> &specs, const std::string &longName,
                                     char shortName)
{
    for (const OptionSpec &spec : specs) {
        if ((!longName.empty() && spec.longName == longName) || (shortName != 0 && spec.shortName == shortName))
            return spec;
    }
    return std::nullopt;
}

} // namespace

const std::map<std::string, std::vector<std::string>> &CommandLine::commands()
{
    static const std::map<std::string, std::vector<std::string>> table{
            {"run", {}},
            {"contexts", {"ls", "new", "rm", "restart", "output"}},
            {"env", {"show", "set", "unset", "clear"}},
            {"files", {"ls", "get", "put"}},
            {"history", {}},
            {"kernelspec", {"install", "list", "remove"}},
            {"languages", {}},
            {"mcp", {}},
            {"plugins", {}},
            {"workspaces", {"ls", "new", "rm", "export", "import", "where"}},
    };
    return table;
}

std::string CommandLine::value(const std::string &name, const std::string &fallback) const
{
    const auto it = m_options.find(name);
    return it == m_options.end() || it->second.empty() ? fallback : it->second.back();
}

std::vector<std::string> CommandLine::values(const std::string &name) const
{
    const auto it = m_options.find(name);
    return it == m_options.end() ? std::vector<std::string>{} : it->second;
}

Result<Poco::JSON::Object> CommandLine::assignments(const std::vector<std::string> &words,
                                                   const std::string &what) const
{
    Poco::JSON::Object object;
    for (const std::string &word : words) {
        const size_t equals = word.find('=');
        if (equals == std::string::npos || equals == 0)
            return usageError(what + " takes KEY=VALUE, not '" + word + "'");
        object.set(word.substr(0, equals), word.substr(equals + 1));
    }
    return object;
}

std::string CommandLine::commandName() const
{
    return action.empty() ? command : command + ' ' + action;
}

Failure CommandLine::usageError(const std::string &message) const
{
    const std::string help = command.empty() ? "replhost-cli --help" : "replhost-cli " + commandName() + " --help";
    return fail(ExitStatus::Usage, message + "\nTry '" + help + "'.");
}

Result<CommandLine> CommandLine::parse(const std::vector<std::string> &arguments)
{
    CommandLine line;
    bool optionsEnded = false;
    // The command's option table once the command (and its action) is known.
    const std::vector<OptionSpec> *specs = nullptr;
    auto needsAction = [&line] {
        return !line.command.empty() && line.action.empty() && !commands().at(line.command).empty();
    };

    for (size_t i = 0; i < arguments.size(); ++i) {
        const std::string &word = arguments[i];
        const bool isOption = !optionsEnded && word.size() > 1 && word[0] == '-';
        if (!isOption) {
            if (line.command.empty()) {
                if (commands().count(word) == 0) {
                    std::vector<std::string> names;
                    for (const auto &entry : commands())
                        names.push_back(entry.first);
                    return line.usageError("unknown command '" + word + "'; the commands are "
                                           + join(names, ", "));
                }
                line.command = word;
                if (!needsAction())
                    specs = &commandOptions().at(line.command);
            } else if (needsAction()) {
                const std::vector<std::string> &actions = commands().at(line.command);
                if (std::find(actions.begin(), actions.end(), word) == actions.end()) {
                    return line.usageError("unknown action '" + word + "' for '" + line.command
                                           + "'; use one of " + join(actions, ", "));
                }
                line.action = word;
                specs = &commandOptions().at(line.commandName());
            } else {
                line.arguments.push_back(word);
            }
            continue;
        }
        if (word == "--") {
            optionsEnded = true;
            continue;
        }

        // --name, --name=value, -x, -x value.
        std::string longName;
        char shortName = 0;
        std::optional<std::string> inlineValue;
        if (word.rfind("--", 0) == 0) {
            longName = word.substr(2);
            if (const size_t equals = longName.find('='); equals != std::string::npos) {
                inlineValue = longName.substr(equals + 1);
                longName.resize(equals);
            }
        } else if (word.size() == 2) {
            shortName = word[1];
        } else {
            return line.usageError("unknown option '" + word + "' (short options stand alone: -l python)");
        }

        std::optional<OptionSpec> spec = findOption(globalOptions(), longName, shortName);
        const bool global = spec.has_value();
        if (!spec && specs)
            spec = findOption(*specs, longName, shortName);
        if (!spec) {
            if (needsAction())
                return line.usageError("'" + line.command + "' needs an action before its options: "
                                       + join(commands().at(line.command), ", "));
            const std::string where = line.command.empty() ? "before a command" : "for '" + line.commandName() + "'";
            return line.usageError("unknown option '" + word + "' " + where);
        }
        const std::string shown = "--" + spec->longName;

        std::string value;
        if (spec->takesValue) {
            if (inlineValue) {
                value = *inlineValue;
            } else if (i + 1 < arguments.size()) {
                value = arguments[++i];
            } else {
                return line.usageError("option " + shown + " needs a value");
            }
        } else if (inlineValue) {
            return line.usageError("option " + shown + " takes no value");
        }

        if (global) {
            if (!spec->takesValue) {
                bool &flag = spec->longName == "json" ? line.json : spec->longName == "help" ? line.help : line.version;
                flag = true;
                continue;
            }
            std::string &target = spec->longName == "url"     ? line.url
                    : spec->longName == "token"               ? line.token
                    : spec->longName == "data-dir"            ? line.dataDir
                                                              : line.workspace;
            if (!target.empty())
                return line.usageError("option " + shown + " is given twice");
            if (value.empty())
                return line.usageError("option " + shown + " needs a non-empty value");
            target = value;
            continue;
        }

        std::vector<std::string> &slot = line.m_options[spec->longName];
        if (!slot.empty() && !spec->repeatable)
            return line.usageError("option " + shown + " is given twice");
        slot.push_back(value);
    }

    if (line.help || line.version)
        return line;
    if (line.command.empty())
        return line.usageError("no command given");
    if (needsAction())
        return line.usageError("'" + line.command + "' needs an action: "
                               + join(commands().at(line.command), ", "));
    return line;
}

} // namespace replhost::cli
