// SPDX-License-Identifier: Apache-2.0
#include "replhost/sdk/session.h"

#include <QTimer>

namespace replhost::sdk {

Session::Session(QObject *parent) : QObject(parent)
{
    // Queued connections across threads (an HTTP thread listening to an engine-thread session)
    // need the types registered by name.
    static const int registered = [] {
        qRegisterMetaType<replhost::sdk::Event>();
        qRegisterMetaType<replhost::sdk::Session::State>();
        return 0;
    }();
    Q_UNUSED(registered);
}

Session::~Session() = default;

namespace {

// Replies from the event loop (a queued call in this thread), never inside the caller's own call:
// callers may hold locks or be half-way through updating their state when they ask. Not tied to
// the session's lifetime, so the reply comes exactly once even if the session is deleted first.
void replyLater(Session::ReplyCallback reply, Error error)
{
    QTimer::singleShot(0, [reply = std::move(reply), error = std::move(error)] { reply(error); });
}

QString languageName(const Session *session)
{
    const QString language = session->info().language;
    return language.isEmpty() ? QStringLiteral("this language") : language;
}

} // namespace

void Session::complete(const QString &code, int cursor, ReplyCallback reply)
{
    Q_UNUSED(code);
    Q_UNUSED(cursor);
    replyLater(std::move(reply),
               makeError(QStringLiteral("unsupported"),
                         QStringLiteral("%1 does not support completion").arg(languageName(this))));
}

void Session::variables(ReplyCallback reply)
{
    replyLater(std::move(reply),
               makeError(QStringLiteral("unsupported"),
                         QStringLiteral("%1 does not support listing variables")
                             .arg(languageName(this))));
}

} // namespace replhost::sdk
