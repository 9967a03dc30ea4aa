// SPDX-License-Identifier: Apache-2.0
#include "framecheck.h"

#include <QJsonArray>
#include <QJsonValue>

#include <climits>
#include <cmath>

namespace replhost::sdk {

namespace {

using L = FrameLimits;

Error violation(QString message)
{
    return makeError(QStringLiteral("protocol_error"), std::move(message));
}

// Why a member is wrong, as "`name` <what>"; empty when it is right. One check per member kind,
// so that every frame type states its members in the same words.
class Members {
public:
    explicit Members(const QJsonObject &frame, QString type) : m_frame(frame), m_type(std::move(type)) {}

    bool failed() const { return !m_problem.isEmpty(); }
    Error error() const
    {
        return violation(QStringLiteral("a `%1` frame whose %2").arg(m_type, m_problem));
    }

    // A string of at most `maxChars`; `required`: it must be there.
    void string(QLatin1StringView name, qsizetype maxChars, bool required = false)
    {
        const QJsonValue v = m_frame.value(name);
        if (v.isUndefined()) {
            if (required)
                fail(name, QStringLiteral("is missing"));
        } else if (!v.isString()) {
            fail(name, QStringLiteral("is not a string"));
        } else if (maxChars > 0 && v.toString().size() > maxChars) {
            fail(name, QStringLiteral("is longer than %1 characters").arg(maxChars));
        }
    }

    // The execution or request the frame is about: a string of at most kMaxIdChars. With
    // `nullable`, null or no id at all also passes (output of a background thread, which
    // belongs to no execution).
    void id(bool nullable)
    {
        const QJsonValue v = m_frame.value(QLatin1StringView("id"));
        if (nullable && (v.isUndefined() || v.isNull()))
            return;
        string(QLatin1StringView("id"), L::kMaxIdChars, true);
    }

    // An integer in [minimum, maximum].
    void integer(QLatin1StringView name, double minimum, double maximum, bool required = false)
    {
        const QJsonValue v = m_frame.value(name);
        if (v.isUndefined()) {
            if (required)
                fail(name, QStringLiteral("is missing"));
            return;
        }
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || !std::isfinite(d) || d != std::floor(d) || d < minimum || d > maximum)
            fail(name, QStringLiteral("is not an integer from %1 to %2")
                               .arg(qint64(minimum))
                               .arg(qint64(maximum)));
    }

    void count(QLatin1StringView name, bool required = false) { integer(name, 0, INT_MAX, required); }

    // A sync mark's seq (protocol §5).
    void mark() { integer(QLatin1StringView("mark"), 0, 9007199254740992.0); }

    void number(QLatin1StringView name)
    {
        const QJsonValue v = m_frame.value(name);
        if (!v.isUndefined() && (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < 0))
            fail(name, QStringLiteral("is not a number of at least 0"));
    }

    void boolean(QLatin1StringView name)
    {
        const QJsonValue v = m_frame.value(name);
        if (!v.isUndefined() && !v.isBool())
            fail(name, QStringLiteral("is not a boolean"));
    }

    // A list of at most `maxEntries` strings of at most `maxChars` each (0: any length).
    void strings(QLatin1StringView name, qsizetype maxEntries, qsizetype maxChars,
                 bool required = false)
    {
        const QJsonValue v = m_frame.value(name);
        if (v.isUndefined()) {
            if (required)
                fail(name, QStringLiteral("is missing"));
            return;
        }
        if (!v.isArray()) {
            fail(name, QStringLiteral("is not a list"));
            return;
        }
        fail(name, stringsProblem(v.toArray(), maxEntries, maxChars));
    }

    // A MIME bundle: an object of at most kMaxMimeTypes entries, each keyed by a MIME type.
    void bundle(QLatin1StringView name, bool required)
    {
        const QJsonValue v = m_frame.value(name);
        if (v.isUndefined()) {
            if (required)
                fail(name, QStringLiteral("is missing"));
            return;
        }
        if (!v.isObject()) {
            fail(name, QStringLiteral("is not an object (a MIME bundle)"));
            return;
        }
        const QJsonObject data = v.toObject();
        if (data.size() > L::kMaxMimeTypes) {
            fail(name, QStringLiteral("has more than %1 MIME types").arg(L::kMaxMimeTypes));
            return;
        }
        for (auto it = data.constBegin(); it != data.constEnd(); ++it) {
            if (!isMimeType(it.key())) {
                fail(name, QStringLiteral("has %1 as a key, which is not a MIME type")
                                   .arg(quotedExcerpt(it.key())));
                return;
            }
            if (!withinDepth(it.value(), 1)) {
                fail(name, QStringLiteral("nests deeper than %1 levels").arg(L::kMaxDepth));
                return;
            }
        }
    }

    // An object, nested at most kMaxDepth levels.
    void object(QLatin1StringView name, qsizetype maxMembers = 0)
    {
        const QJsonValue v = m_frame.value(name);
        if (v.isUndefined())
            return;
        if (!v.isObject())
            fail(name, QStringLiteral("is not an object"));
        else if (maxMembers > 0 && v.toObject().size() > maxMembers)
            fail(name, QStringLiteral("has more than %1 members").arg(maxMembers));
        else if (!withinDepth(v, 0))
            fail(name, QStringLiteral("nests deeper than %1 levels").arg(L::kMaxDepth));
    }

    void fail(QLatin1StringView name, const QString &what)
    {
        if (m_problem.isEmpty() && !what.isEmpty())
            m_problem = QStringLiteral("`%1` %2").arg(name, what);
    }

    static QString stringsProblem(const QJsonArray &list, qsizetype maxEntries, qsizetype maxChars)
    {
        if (list.size() > maxEntries)
            return QStringLiteral("has more than %1 entries").arg(maxEntries);
        for (const QJsonValue &entry : list) {
            if (!entry.isString())
                return QStringLiteral("has an entry that is not a string");
            if (maxChars > 0 && entry.toString().size() > maxChars)
                return QStringLiteral("has an entry longer than %1 characters").arg(maxChars);
        }
        return {};
    }

private:
    // "type/subtype" as RFC 6838 names them, kept to printable ASCII without spaces.
    static bool isMimeType(const QString &key)
    {
        if (key.isEmpty() || key.size() > L::kMaxMimeTypeChars)
            return false;
        qsizetype slashes = 0;
        for (const QChar c : key) {
            if (c.unicode() <= u' ' || c.unicode() > u'~')
                return false;
            slashes += c == u'/';
        }
        return slashes == 1 && !key.startsWith(u'/') && !key.endsWith(u'/');
    }

    static bool withinDepth(const QJsonValue &value, int depth)
    {
        if (value.isArray()) {
            if (depth >= L::kMaxDepth)
                return false;
            for (const QJsonValue &entry : value.toArray())
                if (!withinDepth(entry, depth + 1))
                    return false;
        } else if (value.isObject()) {
            if (depth >= L::kMaxDepth)
                return false;
            const QJsonObject object = value.toObject();
            for (auto it = object.constBegin(); it != object.constEnd(); ++it)
                if (!withinDepth(it.value(), depth + 1))
                    return false;
        }
        return true;
    }

    const QJsonObject &m_frame;
    const QString m_type;
    QString m_problem;
};

void checkCapabilities(Members &m, const QJsonObject &frame)
{
    const QLatin1StringView name("capabilities");
    m.object(name, L::kMaxMembers);
    if (m.failed())
        return;
    const QJsonObject caps = frame.value(name).toObject();
    if (const QJsonValue v = caps.value(QLatin1StringView("snapshot"));
        !v.isUndefined() && (!v.isString() || v.toString().size() > 64))
        m.fail(name, QStringLiteral("has `snapshot` that is not a short string"));
    for (const char *flag : {"complete", "variables", "implicit_started"}) {
        const QJsonValue v = caps.value(QLatin1StringView(flag));
        if (!v.isUndefined() && !v.isBool())
            m.fail(name, QStringLiteral("has `%1` that is not a boolean").arg(QLatin1StringView(flag)));
    }
    const struct {
        const char *key;
        qsizetype entries;
        qsizetype chars;
    } lists[] = {{"interrupt", 16, 64}, {"display", L::kMaxMimeTypes, L::kMaxMimeTypeChars}};
    for (const auto &list : lists) {
        const QJsonValue v = caps.value(QLatin1StringView(list.key));
        if (v.isUndefined())
            continue;
        const QString problem = v.isArray()
                ? Members::stringsProblem(v.toArray(), list.entries, list.chars)
                : QStringLiteral("is not a list");
        if (!problem.isEmpty())
            m.fail(name, QStringLiteral("has `%1` that %2")
                                 .arg(QLatin1StringView(list.key), problem));
    }
}

void checkVariables(Members &m, const QJsonObject &frame)
{
    const QLatin1StringView name("variables");
    const QJsonValue v = frame.value(name);
    if (!v.isArray()) {
        m.fail(name, v.isUndefined() ? QStringLiteral("is missing") : QStringLiteral("is not a list"));
        return;
    }
    const QJsonArray list = v.toArray();
    if (list.size() > L::kMaxListEntries) {
        m.fail(name, QStringLiteral("has more than %1 entries").arg(L::kMaxListEntries));
        return;
    }
    for (const QJsonValue &entry : list) {
        const QJsonObject variable = entry.toObject();
        if (!entry.isObject() || !variable.value(QLatin1StringView("name")).isString()
            || variable.size() > L::kMaxMembers) {
            m.fail(name, QStringLiteral("has an entry that is not a {name, type, repr} object"));
            return;
        }
    }
}

} // namespace

bool isDoneStatus(QStringView status)
{
    return status == u"ok" || status == u"error" || status == u"interrupted";
}

QString quotedExcerpt(QStringView text)
{
    constexpr qsizetype kMax = 40;
    QString shown = text.left(kMax).toString();
    for (QChar &c : shown) {
        if (c.unicode() < u' ' || c.unicode() == 0x7f || c.isSurrogate())
            c = u'?';
    }
    return QLatin1Char('"') + shown + (text.size() > kMax ? QStringLiteral("…\"") : QStringLiteral("\""));
}

Result<WorkerMessage> checkWorkerFrame(const QJsonObject &frame)
{
    const QJsonValue typeValue = frame.value(QLatin1StringView("type"));
    if (!typeValue.isString())
        return violation(typeValue.isUndefined() ? QStringLiteral("a frame without a `type`")
                                                 : QStringLiteral("a frame whose `type` is not a string"));
    const QString type = typeValue.toString();
    if (frame.size() > L::kMaxMembers)
        return violation(QStringLiteral("a frame with more than %1 members").arg(L::kMaxMembers));
    Members m(frame, type);
    WorkerMessage message;
    if (type == u"started") {
        message = WorkerMessage::Started;
        m.id(false);
        m.count(QLatin1StringView("execution_count"));
        if (frame.contains(QLatin1StringView("mark")))
            m.fail(QLatin1StringView("mark"), QStringLiteral("is there: `started` never carries one"));
    } else if (type == u"display" || type == u"result") {
        const bool result = type == u"result";
        message = result ? WorkerMessage::Result : WorkerMessage::Display;
        m.id(!result);
        m.mark();
        if (result)
            m.count(QLatin1StringView("execution_count"));
        m.bundle(QLatin1StringView("data"), true);
        m.object(QLatin1StringView("metadata"));
        if (!result) {
            // A display with an id can be updated later; an update names the display it replaces.
            m.string(QLatin1StringView("display_id"), L::kMaxIdChars);
            m.boolean(QLatin1StringView("update"));
            if (!m.failed() && frame.value(QLatin1StringView("update")).toBool()
                && !frame.contains(QLatin1StringView("display_id")))
                m.fail(QLatin1StringView("update"),
                       QStringLiteral("is true without a `display_id` to update"));
        }
    } else if (type == u"clear_output") {
        message = WorkerMessage::ClearOutput;
        m.id(true);
        m.mark();
        m.boolean(QLatin1StringView("wait"));
    } else if (type == u"input_request") {
        // Revision 2: the running execution waits for a line of input.
        message = WorkerMessage::InputRequest;
        m.id(false);
        m.mark();
        m.string(QLatin1StringView("prompt"), L::kMaxPromptChars);
        m.boolean(QLatin1StringView("password"));
    } else if (type == u"error") {
        message = WorkerMessage::Error;
        m.id(true);
        m.mark();
        m.string(QLatin1StringView("ename"), L::kMaxNameChars, true);
        m.string(QLatin1StringView("evalue"), 0);
        m.strings(QLatin1StringView("traceback"), L::kMaxListEntries, 0);
    } else if (type == u"done") {
        message = WorkerMessage::Done;
        m.id(false);
        m.mark();
        m.string(QLatin1StringView("status"), 0);
        if (!m.failed() && frame.contains(QLatin1StringView("status"))) {
            const QString status = frame.value(QLatin1StringView("status")).toString();
            if (!isDoneStatus(status))
                m.fail(QLatin1StringView("status"),
                       QStringLiteral("is %1, not ok, error or interrupted").arg(quotedExcerpt(status)));
        }
        m.count(QLatin1StringView("execution_count"));
        if (!frame.value(QLatin1StringView("cwd")).isNull())
            m.string(QLatin1StringView("cwd"), L::kMaxPathChars);
        m.number(QLatin1StringView("duration_ms"));
        m.integer(QLatin1StringView("exit_code"), INT_MIN, INT_MAX);
    } else if (type == u"hello") {
        message = WorkerMessage::Hello;
        m.integer(QLatin1StringView("protocol"), 0, INT_MAX, true);
        for (const char *name : {"language", "language_version", "implementation"})
            m.string(QLatin1StringView(name), L::kMaxNameChars);
        m.string(QLatin1StringView("executable"), L::kMaxPathChars);
        m.integer(QLatin1StringView("pid"), 0, INT_MAX);
        checkCapabilities(m, frame);
    } else if (type == u"complete_reply") {
        message = WorkerMessage::CompleteReply;
        m.id(false);
        m.strings(QLatin1StringView("matches"), L::kMaxListEntries, 0, true);
        m.count(QLatin1StringView("cursor_start"));
        m.count(QLatin1StringView("cursor_end"));
    } else if (type == u"variables_reply") {
        message = WorkerMessage::VariablesReply;
        m.id(false);
        checkVariables(m, frame);
    } else if (type == u"error_reply") {
        message = WorkerMessage::ErrorReply;
        m.id(true);
        m.string(QLatin1StringView("reason"), 0);
    } else if (type == u"shutdown_reply") {
        message = WorkerMessage::ShutdownReply;
    } else if (type == u"snapshot" || type == u"snapshot_reply") {
        // Protocol §9: an event of the running execution, or the answer to a snapshot request.
        message = type == u"snapshot" ? WorkerMessage::Snapshot : WorkerMessage::SnapshotReply;
        m.id(false);
        m.string(QLatin1StringView("format"), L::kMaxNameChars);
        m.string(QLatin1StringView("data"), 0);
        m.string(QLatin1StringView("error"), 0);
        m.strings(QLatin1StringView("lost"), L::kMaxListEntries, 0);
        m.strings(QLatin1StringView("unserialisable"), L::kMaxListEntries, 0);
    } else if (type == u"restore_reply") {
        message = WorkerMessage::RestoreReply;
        m.id(false);
        m.strings(QLatin1StringView("lost"), L::kMaxListEntries, 0);
        if (!frame.value(QLatin1StringView("cwd")).isNull())
            m.string(QLatin1StringView("cwd"), L::kMaxPathChars);
        m.string(QLatin1StringView("error"), 0);
    } else if (type == u"log") {
        message = WorkerMessage::Log;
        m.string(QLatin1StringView("level"), L::kMaxNameChars);
        m.string(QLatin1StringView("message"), 0);
    } else {
        // Never passed on as it came: a type reaches clients as an SSE event name and picks an
        // E2B or OpenSandbox line, so a worker must not be able to name one of the host's own
        // events (state_reset, restored, stream, ...) or make one up.
        return violation(QStringLiteral("a frame of unknown type %1").arg(quotedExcerpt(type)));
    }
    if (m.failed())
        return m.error();
    return message;
}

} // namespace replhost::sdk
