// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace replhost::core { class Engine; }
namespace replhost::http { class ApiServer; class ServerUrlFile; }

namespace replhost::gui {

// Starts and stops the embedded HTTP server (the same ApiServer replhost-server runs) on the
// workbench's engine, and shows its address, the token (with copy) and a ready curl example.
// Executions that API clients start appear in the window through the ContextManager's signals,
// not through this panel.
//
// Ownership: owns the ApiServer while it runs; the engine must outlive the panel.
// GUI thread only.
class ServerPanel : public QWidget {
    Q_OBJECT
public:
    // `engine` null: the workbench is attached to a server that serves the API itself, and
    // this panel has nothing to start.
    ServerPanel(core::Engine *engine, QByteArray tokenOverride, QWidget *parent = nullptr);
    ~ServerPanel() override;

    // Port 0 picks a free port. Returns false (and shows why) if the server cannot start.
    bool start(quint16 port);
    void stop();
    bool isRunning() const { return bool(m_server); }
    QString baseUrl() const;
    QByteArray token() const { return m_token; }
    quint16 port() const;
    void setPort(quint16 port);
    // The example runs in the selected context when it is a Python one (the example's code is
    // Python); otherwise it creates a Python context.
    void setContext(const QString &workspace, const QString &contextId, const QString &language);
    QString curlExample() const;
    QString lastError() const { return m_lastError; }

signals:
    void runningChanged(bool running);

private:
    void updateView();
    QString example(const QString &token) const;

    core::Engine *m_engine;
    QByteArray m_tokenOverride;
    QByteArray m_token;
    std::unique_ptr<http::ApiServer> m_server;
    // How replhost-cli finds this server; present while it listens.
    std::unique_ptr<http::ServerUrlFile> m_urlFile;
    QString m_lastError;
    QString m_exampleWorkspace;
    QString m_exampleContext;  // empty: the example creates a context
    QSpinBox *m_port;
    QPushButton *m_toggle;
    QLabel *m_status;
    QLineEdit *m_address;
    QLineEdit *m_tokenField;
    QPushButton *m_showToken, *m_copyToken, *m_copyCurl;
    QPlainTextEdit *m_curl;
};

} // namespace replhost::gui
