// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "storage/records.h"

#include <replhost/sdk/result.h>

#include <QMap>
#include <QWidget>

#include <functional>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace replhost::gui {

// One env layer as a table (key, value or "unset") with a small form to set a key, unset it
// (hide it from lower layers) or clear it (drop it from this layer). The layer is read and
// changed through the two functions given to setSource(), so the same widget serves the
// workspace and the context layers. Both answer through a callback, at once or later (a remote
// engine); an answer that comes after another setSource() is dropped.
//
// Ownership: a QWidget in its parent's tree. GUI thread only.
class EnvLayerTable : public QWidget {
    Q_OBJECT
public:
    using Layer = Result<QList<storage::EnvVarRecord>>;
    using Reader = std::function<void(std::function<void(Layer)> answer)>;
    using Writer = std::function<void(const QMap<QString, QString> &set, const QStringList &unset,
                                      const QStringList &clear, std::function<void(Result<void>)> answer)>;

    EnvLayerTable(const QString &title, QWidget *parent = nullptr);

    // No source: the table is empty and disabled, with `why` shown.
    void setSource(Reader reader, Writer writer, const QString &why = QString());
    void reload();

    // The form's actions, for keyboard users and tests. False when the change was refused
    // before the call returned (lastError() says why); a later refusal shows in the table.
    bool setVariable(const QString &key, const QString &value);
    bool unsetVariable(const QString &key);
    bool clearVariable(const QString &key);

    QTableWidget *table() const { return m_table; }
    QString lastError() const { return m_lastError; }

signals:
    // The layer was changed here.
    void changed();

private:
    bool apply(const QMap<QString, QString> &set, const QStringList &unset, const QStringList &clear);
    void showLayer(const Layer &layer);

    Reader m_reader;
    Writer m_writer;
    quint64 m_source = 0;  // counts setSource() calls
    QLabel *m_title;
    QTableWidget *m_table;
    QLineEdit *m_key, *m_value;
    QPushButton *m_set, *m_unset, *m_clear;
    QLabel *m_status;
    QString m_lastError;
};

} // namespace replhost::gui
