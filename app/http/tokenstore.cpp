// SPDX-License-Identifier: Apache-2.0
#include "tokenstore.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace replhost::http {

namespace {

Error ioError(const QString &what, const QString &path)
{
    return makeError(QStringLiteral("io"), QStringLiteral("%1 %2: %3")
                                                   .arg(what, path, QString::fromLocal8Bit(strerror(errno))));
}

// Creates `path` with mode 0600 from the start (never world-readable, not even briefly), via a
// temporary file renamed into place so a crash never leaves a half-written token.
Result<void> writePrivateFile(const QString &path, const QByteArray &content)
{
    const QString temporary = path + QStringLiteral(".tmp.%1").arg(::getpid());
    const QByteArray tmp = QFile::encodeName(temporary);
    ::unlink(tmp.constData());
    const int fd = ::open(tmp.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return ioError(QStringLiteral("cannot create"), temporary);
    qsizetype written = 0;
    while (written < content.size()) {
        const ssize_t n = ::write(fd, content.constData() + written, size_t(content.size() - written));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const Error error = ioError(QStringLiteral("cannot write"), temporary);
            ::close(fd);
            ::unlink(tmp.constData());
            return error;
        }
        written += n;
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const Error error = ioError(QStringLiteral("cannot write"), temporary);
        ::unlink(tmp.constData());
        return error;
    }
    if (::rename(tmp.constData(), QFile::encodeName(path).constData()) != 0) {
        const Error error = ioError(QStringLiteral("cannot create"), path);
        ::unlink(tmp.constData());
        return error;
    }
    return {};
}

} // namespace

QByteArray TokenStore::generate()
{
    std::array<quint32, 8> words{};  // 32 bytes
    QRandomGenerator::system()->fillRange(words.data(), qsizetype(words.size()));
    return QByteArray(reinterpret_cast<const char *>(words.data()), sizeof(words)).toHex();
}

bool TokenStore::isUsable(const QByteArray &token)
{
    return token.size() >= 16 && token.size() <= 4096
            && std::all_of(token.begin(), token.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

Result<TokenStore::Token> TokenStore::loadFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot read the token file %1: %2")
                                                       .arg(path, file.errorString()));
    const QByteArray value = file.read(8192).trimmed();
    if (!isUsable(value))
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("the token file %1 must hold 16 to 4096 printable ASCII "
                                        "characters without spaces").arg(path));
    return Token{value, path, false, {}};
}

Result<TokenStore::Token> TokenStore::load(const QString &dataDir, const QByteArray &override)
{
    if (!override.isEmpty()) {
        if (!isUsable(override)) {
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("REPLHOST_TOKEN must be 16 to 4096 printable ASCII "
                                            "characters without spaces"));
        }
        return Token{override, QStringLiteral("REPLHOST_TOKEN"), false, {}};
    }

    const QString path = QDir(dataDir).filePath(fileName());
    const QByteArray nativePath = QFile::encodeName(path);
    Token token;
    token.source = path;

    struct stat info {};
    if (::stat(nativePath.constData(), &info) == 0) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return makeError(QStringLiteral("io"), QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
        token.value = file.read(8192).trimmed();
        if (!token.value.isEmpty()) {
            if (!isUsable(token.value)) {
                return makeError(QStringLiteral("bad_request"),
                                 QStringLiteral("%1 does not hold a usable token; delete it to "
                                                "have a new one generated").arg(path));
            }
            if ((info.st_mode & 077) != 0) {
                if (::chmod(nativePath.constData(), 0600) != 0)
                    return ioError(QStringLiteral("cannot restrict the mode of"), path);
                token.warning = QStringLiteral("%1 was readable by other users; its mode is now "
                                               "0600 (consider deleting it to get a new token)").arg(path);
            }
            return token;
        }
        // An empty file (say, from a full disk) is replaced by a new token.
    } else if (errno != ENOENT) {
        return ioError(QStringLiteral("cannot read"), path);
    }

    if (!QDir().mkpath(dataDir))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot create %1").arg(dataDir));
    token.value = generate();
    token.created = true;
    if (const Result<void> written = writePrivateFile(path, token.value + '\n'); !written)
        return written.error();
    return token;
}

} // namespace replhost::http
