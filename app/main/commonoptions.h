// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>
#include <QStringList>

namespace replhost::app {

// What the command lines of both executables (replhost-server and the replhost workbench)
// share: -h/--help, --version, --data-dir and --plugin-path, the environment variables the help
// names, and the first step of parsing, so that the two say these things the same way.
//
// Ownership: keeps a reference to the parser, which must outlive it. Threading: none.
class CommonOptions {
public:
    enum class Outcome { Go, Fail, ShowHelp, ShowVersion };

    // Adds the shared options to `parser`, before the caller adds its own.
    explicit CommonOptions(QCommandLineParser &parser);

    // The parser's help followed by the environment variables both executables read.
    QString helpText() const;
    // Parses `arguments` (the program name first): Fail with the reason in `*error` for an
    // unknown option or a positional argument, ShowHelp or ShowVersion when asked, else Go.
    Outcome parse(const QStringList &arguments, QString *error) const;
    // The same into the options of an executable (its Action has Fail, ShowHelp and
    // ShowVersion): true to go on reading its own options, false when `options` is complete.
    template <typename Options>
    bool parseInto(const QStringList &arguments, Options &options) const
    {
        using Action = typename Options::Action;
        switch (parse(arguments, &options.error)) {
        case Outcome::Go:
            return true;
        case Outcome::Fail:
            options.action = Action::Fail;
            break;
        case Outcome::ShowHelp:
            options.action = Action::ShowHelp;
            break;
        case Outcome::ShowVersion:
            options.action = Action::ShowVersion;
            break;
        }
        return false;
    }

    QString dataDir() const { return m_parser.value(m_dataDir); }
    QStringList pluginPaths() const { return m_parser.values(m_pluginPath); }

private:
    QCommandLineParser &m_parser;
    const QCommandLineOption m_help;
    const QCommandLineOption m_version;
    const QCommandLineOption m_dataDir;
    const QCommandLineOption m_pluginPath;
};

} // namespace replhost::app
