// SPDX-License-Identifier: Apache-2.0
// replhost-cli(1) against docs/cli.md: the man page's COMMANDS are exactly the synopses of
// cli.md's Commands section, one entry each, written with roff's minus (\-) so that an option
// copied from the rendered page is typed right; and every command the client knows has one.
// Both files are read as text from the source tree.

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

namespace {

QStringList lines(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
}

QString simplified(QString text)
{
    return text.simplified();
}

} // namespace

class tst_ManPage : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void commandsAreCliMdsSynopses();
    void optionsUseRoffsMinus();
    void everyCommandOfTheClientIsThere();

private:
    QStringList m_documented;  // cli.md's synopses, without "replhost-cli "
    QStringList m_manEntries;  // the man page's COMMANDS tags, as rendered text
    QStringList m_manSources;  // the same, as roff
};

void tst_ManPage::initTestCase()
{
    // cli.md: the code blocks of the "## Commands" section, lines that start "replhost-cli ".
    bool inCommands = false;
    bool inCode = false;
    for (const QString &line : lines(QStringLiteral(REPLHOST_SOURCE_DIR "/docs/cli.md"))) {
        if (line.startsWith(QLatin1String("## ")))
            inCommands = line == QLatin1String("## Commands");
        if (line.startsWith(QLatin1String("```")))
            inCode = !inCode;
        else if (inCommands && inCode && line.startsWith(QLatin1String("replhost-cli ")))
            m_documented.append(simplified(line.mid(int(qstrlen("replhost-cli ")))));
    }
    QVERIFY(m_documented.size() > 15);

    // The man page: the tag line after each .TP of ".SH COMMANDS".
    bool inSection = false;
    bool tagNext = false;
    static const QRegularExpression font(QStringLiteral("\\\\f[BIRP]"));
    for (const QString &line : lines(QStringLiteral(REPLHOST_SOURCE_DIR "/packaging/man/replhost-cli.1"))) {
        if (line.startsWith(QLatin1String(".SH ")))
            inSection = line == QLatin1String(".SH COMMANDS");
        if (!inSection)
            continue;
        if (line == QLatin1String(".TP")) {
            tagNext = true;
            continue;
        }
        if (!tagNext)
            continue;
        tagNext = false;
        QVERIFY2(line.startsWith(QLatin1String(".B ")), qPrintable(line));
        m_manSources.append(line);
        QString text = line.mid(3);
        text.remove(font).replace(QStringLiteral("\\-"), QStringLiteral("-"));
        m_manEntries.append(simplified(text));
    }
    QVERIFY(!m_manEntries.isEmpty());
}

void tst_ManPage::commandsAreCliMdsSynopses()
{
    QCOMPARE(m_manEntries, m_documented);
}

void tst_ManPage::optionsUseRoffsMinus()
{
    // A plain '-' is a hyphen to roff, which may render it as U+2010.
    static const QRegularExpression bareMinus(QStringLiteral("(^|[^\\\\])-"));
    for (const QString &source : std::as_const(m_manSources))
        QVERIFY2(!bareMinus.match(source).hasMatch(), qPrintable(source));
}

void tst_ManPage::everyCommandOfTheClientIsThere()
{
    // The client's own list, from its help.
    QProcess help;
    help.start(QStringLiteral(REPLHOST_CLI_EXECUTABLE), {QStringLiteral("--help")});
    QVERIFY(help.waitForFinished(10000));
    const QString text = QString::fromUtf8(help.readAllStandardOutput());
    const qsizetype start = text.indexOf(QLatin1String("\nCommands:\n"));
    const qsizetype end = text.indexOf(QLatin1String("\n\n"), start + 1);
    QVERIFY2(start >= 0 && end > start, qPrintable(text));
    QSet<QString> documented;
    for (const QString &entry : std::as_const(m_manEntries))
        documented.insert(entry.section(QLatin1Char(' '), 0, 0));
    int commands = 0;
    for (const QString &line : text.mid(start + 11, end - start - 11).split(QLatin1Char('\n'))) {
        const QString command = line.trimmed().section(QLatin1Char(' '), 0, 0);
        QVERIFY2(documented.contains(command), qPrintable(command));
        ++commands;
    }
    QVERIFY(commands >= 9);
}

QTEST_GUILESS_MAIN(tst_ManPage)
#include "tst_manpage.moc"
