// SPDX-License-Identifier: Apache-2.0
// Red team: code running in a context writes frames of its own on its worker's event channel, as
// its driver does, through a real server. Whatever the frame says, it is rejected as a protocol
// error: it never ends another execution, never becomes an event of the host's own (an SSE event
// name is never a worker's), and the server keeps answering.
//
// The attacking code finds the channel as any code can (the driver may have moved it off fd 4):
// the write-only pipes among its descriptors that are not its stdout or stderr. It writes the
// frame it finds in a file the test writes, when the test writes it, so that the frame can name
// executions that start after the attacker.
#include "http/apiclient.h"
#include "http/serverprocess.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

namespace {

// Code that waits for the file at %1, then writes its contents as a frame on every pipe the
// process may write to besides its stdout and stderr, then sleeps.
QString attackerCode(const QString &language)
{
    if (language == QLatin1String("python"))
        return QStringLiteral(R"(import fcntl, os, time
while not os.path.exists('%1'):
    time.sleep(0.01)
body = open('%1', 'rb').read()
own = {os.readlink('/proc/self/fd/%d' % f) for f in (1, 2)}
for n in os.listdir('/proc/self/fd'):
    try:
        link = os.readlink('/proc/self/fd/' + n)
        if (link.startswith('pipe:') and link not in own
                and fcntl.fcntl(int(n), fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY):
            os.write(int(n), b'%d\n' % len(body) + body)
    except OSError:
        pass
time.sleep(30))");
    if (language == QLatin1String("bash"))
        return QStringLiteral(R"(until [[ -e '%1' ]]; do sleep 0.01; done
body=$(<'%1')
o1=$(readlink /proc/$$/fd/1); o2=$(readlink /proc/$$/fd/2)
for p in /proc/$$/fd/*; do
  n=${p##*/}
  l=$(readlink "$p") || continue
  [[ $l == pipe:* && $l != "$o1" && $l != "$o2" ]] || continue
  fl=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$$/fdinfo/$n)
  (( (8#$fl & 3) == 1 )) || continue
  printf '%d\n%s' "${#body}" "$body" >&$n
done
sleep 30)");
    if (language == QLatin1String("perl"))
        return QStringLiteral(R"(use POSIX ();
select(undef, undef, undef, 0.01) until -e '%1';
open(my $in, '<', '%1') or die "$!";
my $body = do { local $/; <$in> };
my %own = map { (readlink("/proc/self/fd/$_") // '') => 1 } 1, 2;
opendir(my $dir, '/proc/self/fd') or die "$!";
for my $n (grep { /^\d+$/ } readdir $dir) {
    my $link = readlink("/proc/self/fd/$n") // next;
    next unless $link =~ /^pipe:/ && !$own{$link};
    open(my $info, '<', "/proc/self/fdinfo/$n") or next;
    my ($flags) = map { /^flags:\s*([0-7]+)/ ? oct($1) : () } <$info>;
    next unless defined $flags && ($flags & 3) == 1;
    my $frame = length($body) . "\n" . $body;
    POSIX::write($n, $frame, length $frame);
}
sleep 30;)");
    if (language == QLatin1String("javascript"))
        return QStringLiteral(R"({
const fs = require('fs');
const nap = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
while (!fs.existsSync('%1')) nap(10);
const body = fs.readFileSync('%1', 'latin1');
// Node keeps pipes of its own (libuv's signal pipe) with both ends in the process: the channel
// is a pipe whose read end is elsewhere.
const own = [1, 2].map((f) => fs.readlinkSync('/proc/self/fd/' + f));
const ends = [];
for (const n of fs.readdirSync('/proc/self/fd')) {
  try {
    const link = fs.readlinkSync('/proc/self/fd/' + n);
    const m = /flags:\s*([0-7]+)/.exec(fs.readFileSync('/proc/self/fdinfo/' + n, 'utf8'));
    if (link.startsWith('pipe:') && m) ends.push({ n: Number(n), link, mode: parseInt(m[1], 8) & 3 });
  } catch (e) {}
}
for (const end of ends) {
  if (end.mode !== 1 || own.includes(end.link)) continue;
  if (ends.some((other) => other.link === end.link && other.mode !== 1)) continue;
  try { fs.writeSync(end.n, body.length + '\n' + body); } catch (e) {}
}
nap(30000);
})");
    return {};
}

// Code that prints "victim" and a newline, in `language`.
QString victimCode(const QString &language)
{
    if (language == QLatin1String("python"))
        return QStringLiteral("print('victim')");
    if (language == QLatin1String("bash"))
        return QStringLiteral("echo victim");
    if (language == QLatin1String("perl"))
        return QStringLiteral("print \"victim\\n\";");
    return QStringLiteral("console.log('victim')");
}

QByteArray frame(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// Every event of a stream until it ends.
QList<ApiClient::Event> rest(ApiClient::Stream &stream)
{
    QList<ApiClient::Event> events;
    while (std::optional<ApiClient::Event> event = stream.next(60000))
        events.append(*event);
    return events;
}

QString stdoutOf(const QList<ApiClient::Event> &events)
{
    QString text;
    for (const ApiClient::Event &event : events)
        if (event.type == "stream" && event.json().value(QLatin1String("name")) == QLatin1String("stdout"))
            text += event.json().value(QLatin1String("text")).toString();
    return text;
}

QList<QByteArray> typesOf(const QList<ApiClient::Event> &events)
{
    QList<QByteArray> types;
    for (const ApiClient::Event &event : events)
        types.append(event.type);
    return types;
}

ApiClient::Event firstOf(const QList<ApiClient::Event> &events, const QByteArray &type)
{
    for (const ApiClient::Event &event : events)
        if (event.type == type)
            return event;
    return {};
}

} // namespace

class tst_ForgedFrames : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    }

    void forgedDoneOfAnotherContextsRunIsRejected_data() { languages(); }
    void forgedDoneOfAnotherContextsRunIsRejected()
    {
        QFETCH(QString, language);
        requireLanguage(language);
        const QString attacker = client().createContext(language);
        const QString victim = client().createContext(QStringLiteral("python"));
        QVERIFY(!attacker.isEmpty() && !victim.isEmpty());

        // The victim runs until the test lets it go.
        const QString go = path(QStringLiteral("go-") + language);
        auto victimRun = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(victim),
                {{QStringLiteral("code"),
                  QStringLiteral("import os, time\nwhile not os.path.exists('%1'):\n"
                                 "    time.sleep(0.01)\nprint('victim')").arg(go)}});
        QCOMPARE(victimRun->status(), 200);
        const std::optional<ApiClient::Event> head = victimRun->next();
        QVERIFY(head && head->type == "execution");
        const QString victimId = head->json().value(QLatin1String("id")).toString();

        const QString forged = writeFrame(frame({{QStringLiteral("type"), QStringLiteral("done")},
                                                 {QStringLiteral("id"), victimId},
                                                 {QStringLiteral("status"), QStringLiteral("ok")},
                                                 {QStringLiteral("execution_count"), 1}}));
        const QJsonObject attack = client().runAndWait(attacker, attackerCode(language).arg(forged));
        QCOMPARE(attack.value(QLatin1String("status")).toString(), QStringLiteral("error"));
        const QJsonObject error = attack.value(QLatin1String("error")).toObject();
        QCOMPARE(error.value(QLatin1String("ename")).toString(), QStringLiteral("ProtocolError"));
        QVERIFY2(error.value(QLatin1String("evalue")).toString().contains(victimId),
                 qPrintable(error.value(QLatin1String("evalue")).toString()));

        // Untouched: it ends when it ends, with its own output and its own done.
        QVERIFY(QFile(go).open(QIODevice::WriteOnly));
        const QList<ApiClient::Event> events = rest(*victimRun);
        QCOMPARE(typesOf(events).count("done"), 1);
        QCOMPARE(firstOf(events, "done").json().value(QLatin1String("status")).toString(),
                 QStringLiteral("ok"));
        QCOMPARE(stdoutOf(events), QStringLiteral("victim\n"));
        serverStillAnswers(attacker, language);
    }

    void forgedDoneOfAQueuedRunIsRejected_data() { languages(); }
    void forgedDoneOfAQueuedRunIsRejected()
    {
        QFETCH(QString, language);
        requireLanguage(language);
        const QString context = client().createContext(language);
        QVERIFY(!context.isEmpty());
        const QString frameFile = path(QStringLiteral("queued-") + language);
        auto attackRun = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(context),
                {{QStringLiteral("code"), attackerCode(language).arg(frameFile)}});
        QCOMPARE(attackRun->status(), 200);
        QVERIFY(attackRun->next());  // its head, sent at once
        auto victimRun = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(context),
                {{QStringLiteral("code"), victimCode(language)}});
        QCOMPARE(victimRun->status(), 200);
        const std::optional<ApiClient::Event> head = victimRun->next();
        QVERIFY(head && head->type == "execution");
        const QString victimId = head->json().value(QLatin1String("id")).toString();

        // The attacker, still running, ends the run queued behind it, with a result to go with.
        writeFrame(frame({{QStringLiteral("type"), QStringLiteral("done")},
                          {QStringLiteral("id"), victimId},
                          {QStringLiteral("status"), QStringLiteral("ok")},
                          {QStringLiteral("execution_count"), 2}}),
                   frameFile);
        const QList<ApiClient::Event> attackEvents = rest(*attackRun);
        QCOMPARE(firstOf(attackEvents, "error").json().value(QLatin1String("ename")).toString(),
                 QStringLiteral("ProtocolError"));
        QCOMPARE(firstOf(attackEvents, "done").json().value(QLatin1String("status")).toString(),
                 QStringLiteral("error"));

        // The victim runs after it, in a fresh interpreter, to its own end.
        const QList<ApiClient::Event> events = rest(*victimRun);
        QCOMPARE(typesOf(events).count("done"), 1);
        QCOMPARE(firstOf(events, "done").json().value(QLatin1String("status")).toString(),
                 QStringLiteral("ok"));
        QCOMPARE(stdoutOf(events), QStringLiteral("victim\n"));
        QVERIFY(typesOf(events).contains("state_reset"));
        serverStillAnswers(context, language);
    }

    // Types a client would take for the host's own events, and one that would add SSE lines.
    void forgedEventTypesNeverReachClients_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("type");
        for (const QString &language : kLanguages) {
            for (const char *type : {"state_reset", "stream", "execution", "restored", "truncated",
                                     "x\ndata: {\"forged\":1}\n\nevent: done"}) {
                QTest::addRow("%s, %s", qPrintable(language),
                              QByteArray(type).replace('\n', "\\n").constData())
                        << language << QString::fromLatin1(type);
            }
        }
    }

    void forgedEventTypesNeverReachClients()
    {
        QFETCH(QString, language);
        QFETCH(QString, type);
        requireLanguage(language);
        const QString context = contextFor(language);
        QVERIFY(!context.isEmpty());
        const QString frameFile = path(QStringLiteral("type-%1-%2").arg(language).arg(++m_files));
        auto attackRun = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(context),
                {{QStringLiteral("code"), attackerCode(language).arg(frameFile)}});
        QCOMPARE(attackRun->status(), 200);
        const std::optional<ApiClient::Event> head = attackRun->next();
        QVERIFY(head && head->type == "execution");
        const QString ownId = head->json().value(QLatin1String("id")).toString();
        writeFrame(frame({{QStringLiteral("type"), type},
                          {QStringLiteral("id"), ownId},
                          {QStringLiteral("name"), QStringLiteral("stdout")},
                          {QStringLiteral("text"), QStringLiteral("forged")},
                          {QStringLiteral("reason"), QStringLiteral("forged")},
                          {QStringLiteral("message"), QStringLiteral("forged")}}),
                   frameFile);

        const QList<ApiClient::Event> events = rest(*attackRun);
        for (const ApiClient::Event &event : events) {
            QVERIFY2(QList<QByteArray>({"started", "stream", "error", "done", "state_reset"})
                             .contains(event.type),
                     event.type.constData());
            QVERIFY2(!event.data.contains("\"forged\""), event.data.constData());
            QCOMPARE(event.json().value(QLatin1String("type")).toString(),
                     QString::fromLatin1(event.type));
        }
        const QJsonObject error = firstOf(events, "error").json();
        QCOMPARE(error.value(QLatin1String("ename")).toString(), QStringLiteral("ProtocolError"));
        QVERIFY2(error.value(QLatin1String("evalue")).toString().contains("unknown type"),
                 qPrintable(error.value(QLatin1String("evalue")).toString()));
        QCOMPARE(typesOf(events).count("done"), 1);
        serverStillAnswers(context, language);
    }

    // The processes user code starts inherit neither end of the protocol: no pipe but their
    // stdin, stdout and stderr (the driver's fds 3 and 4, wherever it keeps them, are
    // close-on-exec, or closed while the cell runs).
    void childProcessesGetNoProtocolPipes_data() { languages(); }
    void childProcessesGetNoProtocolPipes()
    {
        QFETCH(QString, language);
        requireLanguage(language);
        const QString script = path(QStringLiteral("pipes.py"));
        QFile file(script);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("import os\n"
                   "pipes = []\n"
                   "for n in os.listdir('/proc/self/fd'):\n"
                   "    try:\n"
                   "        if int(n) > 2 and os.readlink('/proc/self/fd/' + n).startswith('pipe:'):\n"
                   "            pipes.append(int(n))\n"
                   "    except OSError:\n"
                   "        pass\n"
                   "print('pipes:', sorted(pipes))\n");
        file.close();
        // Started the plain way for each language (fork and exec, no closing of descriptors).
        QString code;
        if (language == QLatin1String("python"))
            code = QStringLiteral("import os\nos.system('python3 %1')");
        else if (language == QLatin1String("bash"))
            code = QStringLiteral("python3 %1");
        else if (language == QLatin1String("perl"))
            code = QStringLiteral("system('python3', '%1');");
        else
            code = QStringLiteral("require('child_process').execFileSync('python3', ['%1'], "
                                  "{ stdio: 'inherit' })");
        const QString context = contextFor(language);
        QVERIFY(!context.isEmpty());
        const QJsonObject run = client().runAndWait(context, code.arg(script));
        QCOMPARE(run.value(QLatin1String("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(run.value(QLatin1String("stdout")).toString(), QStringLiteral("pipes: []\n"));
    }

private:
    inline static const QStringList kLanguages{QStringLiteral("python"), QStringLiteral("bash"),
                                               QStringLiteral("perl"), QStringLiteral("javascript")};

    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }

    static void languages()
    {
        QTest::addColumn<QString>("language");
        for (const QString &language : kLanguages)
            QTest::newRow(qPrintable(language)) << language;
    }

    void requireLanguage(const QString &language)
    {
        const QString why = client().missingLanguage(language);
        if (!why.isEmpty())
            QSKIP(qPrintable(why));
    }

    // One context per language for the rows that can share one: its worker is replaced after
    // every attack.
    QString contextFor(const QString &language)
    {
        if (!m_contexts.contains(language))
            m_contexts.insert(language, client().createContext(language));
        return m_contexts.value(language);
    }

    QString path(const QString &name) const { return m_dir.filePath(name); }

    // Writes `body` to `file` (a fresh one in the test's directory when empty) at once, so the
    // attacker never reads half of it. Returns the file's path.
    QString writeFrame(const QByteArray &body, QString file = {})
    {
        if (file.isEmpty())
            file = path(QStringLiteral("frame-%1").arg(++m_files));
        QSaveFile out(file);
        if (!out.open(QIODevice::WriteOnly) || out.write(body) != body.size() || !out.commit())
            qWarning() << "cannot write" << file;
        return file;
    }

    // The server answers, and the attacked context runs code again in a fresh interpreter.
    void serverStillAnswers(const QString &context, const QString &language)
    {
        QCOMPARE(client().get(QStringLiteral("/healthz")).status, 200);
        const QJsonObject after = client().runAndWait(context, victimCode(language));
        QCOMPARE(after.value(QLatin1String("status")).toString(), QStringLiteral("ok"));
    }

    QTemporaryDir m_dir;
    ServerProcess m_server;
    QHash<QString, QString> m_contexts;
    int m_files = 0;
};

QTEST_GUILESS_MAIN(tst_ForgedFrames)
#include "tst_forgedframes.moc"
