// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>

#include <optional>
#include <utility>
#include <variant>

namespace replhost {

// An error as a value. `code` is a stable, machine-readable word ("not_found", "bad_request",
// "unavailable", "conflict", "internal", ...) that the HTTP face maps to a status code; `message`
// is a sentence for people that says what happened and, where possible, what to do.
struct Error {
    QString code;
    QString message;
};

// Either a T or an Error. Used at every module boundary (storage, core, plugins) instead of
// exceptions, which never cross plugin or thread boundaries in replhost.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error error) : m_v(std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    // Precondition: ok().
    T &value() & { return std::get<0>(m_v); }
    const T &value() const & { return std::get<0>(m_v); }
    T &&value() && { return std::get<0>(std::move(m_v)); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }

    // Precondition: !ok().
    const Error &error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)) {}

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error &error() const { return *m_error; }

private:
    std::optional<Error> m_error;
};

inline Error makeError(QString code, QString message)
{
    return Error{std::move(code), std::move(message)};
}

} // namespace replhost
