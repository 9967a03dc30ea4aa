// SPDX-License-Identifier: Apache-2.0
#include "serverpanel.h"

#include "core/engine.h"
#include "http/apiserver.h"
#include "http/curlexample.h"
#include "http/serverurlfile.h"
#include "http/tokenstore.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace replhost::gui {

ServerPanel::ServerPanel(core::Engine *engine, QByteArray tokenOverride, QWidget *parent)
    : QWidget(parent)
    , m_engine(engine)
    , m_tokenOverride(std::move(tokenOverride))
    , m_port(new QSpinBox(this))
    , m_toggle(new QPushButton(this))
    , m_status(new QLabel(this))
    , m_address(new QLineEdit(this))
    , m_tokenField(new QLineEdit(this))
    , m_showToken(new QPushButton(tr("Show"), this))
    , m_copyToken(new QPushButton(tr("Copy"), this))
    , m_copyCurl(new QPushButton(tr("Copy example"), this))
    , m_curl(new QPlainTextEdit(this))
{
    m_port->setRange(0, 65535);
    m_port->setValue(49999);
    m_port->setToolTip(tr("0 picks a free port"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_address->setReadOnly(true);
    m_tokenField->setReadOnly(true);
    m_tokenField->setEchoMode(QLineEdit::Password);
    m_showToken->setCheckable(true);
    m_curl->setReadOnly(true);
    m_curl->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_curl->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_curl->setAccessibleName(tr("curl example"));

    auto *toggleRow = new QHBoxLayout;
    toggleRow->addWidget(m_port);
    toggleRow->addWidget(m_toggle, 1);
    auto *tokenRow = new QHBoxLayout;
    tokenRow->addWidget(m_tokenField, 1);
    tokenRow->addWidget(m_showToken);
    tokenRow->addWidget(m_copyToken);

    auto *form = new QFormLayout;
    form->addRow(tr("Port:"), toggleRow);
    form->addRow(tr("Address:"), m_address);
    form->addRow(tr("Token:"), tokenRow);

    auto *curlHeader = new QHBoxLayout;
    auto *curlLabel = new QLabel(tr("Try it from a shell:"), this);
    curlHeader->addWidget(curlLabel, 1);
    curlHeader->addWidget(m_copyCurl);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(form);
    layout->addWidget(m_status);
    layout->addLayout(curlHeader);
    layout->addWidget(m_curl, 1);

    connect(m_toggle, &QPushButton::clicked, this, [this] {
        if (isRunning())
            stop();
        else
            start(quint16(m_port->value()));
    });
    connect(m_showToken, &QPushButton::toggled, this, [this](bool shown) {
        m_tokenField->setEchoMode(shown ? QLineEdit::Normal : QLineEdit::Password);
        m_showToken->setText(shown ? tr("Hide") : tr("Show"));
        updateView();
    });
    connect(m_copyToken, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(QString::fromLatin1(m_token)); });
    connect(m_copyCurl, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(curlExample()); });
    updateView();
}

ServerPanel::~ServerPanel() = default;

quint16 ServerPanel::port() const
{
    return m_server ? m_server->port() : quint16(m_port->value());
}

void ServerPanel::setPort(quint16 port)
{
    m_port->setValue(port);
}

QString ServerPanel::baseUrl() const
{
    return m_server ? m_server->baseUrl() : QString();
}

bool ServerPanel::start(quint16 port)
{
    if (m_server)
        return true;
    m_port->setValue(port);
    if (!m_engine) {
        m_lastError = tr("This workbench is attached to a replhost-server, which serves the API itself.");
        updateView();
        return false;
    }
    const auto token = http::TokenStore::load(m_engine->dataDir(), m_tokenOverride);
    if (!token) {
        m_lastError = token.error().message;
        updateView();
        return false;
    }
    http::ApiServerConfig config;
    config.port = port;
    config.token = token->value;
    auto server = std::make_unique<http::ApiServer>(*m_engine, config);
    if (const Result<void> listening = server->listen(); !listening) {
        m_lastError = listening.error().message;
        updateView();
        return false;
    }
    m_lastError = token->warning;
    m_token = token->value;
    m_urlFile = std::make_unique<http::ServerUrlFile>(m_engine->dataDir());
    if (const Result<void> written = m_urlFile->write(server->baseUrl(), QCoreApplication::applicationPid()); !written)
        m_lastError = written.error().message + tr("; clients need --url");
    m_server = std::move(server);
    m_port->setValue(m_server->port());
    updateView();
    emit runningChanged(true);
    return true;
}

void ServerPanel::stop()
{
    if (!m_server)
        return;
    m_urlFile.reset();  // removes the file it wrote
    m_server.reset();
    m_lastError.clear();
    updateView();
    emit runningChanged(false);
}

void ServerPanel::setContext(const QString &workspace, const QString &contextId, const QString &language)
{
    const bool python = language == QLatin1String("python");
    m_exampleWorkspace = python ? workspace : QString();
    m_exampleContext = python ? contextId : QString();
    updateView();
}

QString ServerPanel::example(const QString &token) const
{
    return m_server ? http::CurlExample::python(m_server->baseUrl(), token, QString(), m_exampleWorkspace,
                                                m_exampleContext)
                    : QString();
}

QString ServerPanel::curlExample() const
{
    return example(QString::fromLatin1(m_token));
}

void ServerPanel::updateView()
{
    const bool running = isRunning();
    m_toggle->setText(running ? tr("Stop server") : tr("Start server"));
    m_toggle->setEnabled(m_engine != nullptr);
    m_port->setEnabled(!running);
    m_address->setText(running ? m_server->baseUrl() : QString());
    m_tokenField->setText(running ? QString::fromLatin1(m_token) : QString());
    m_copyToken->setEnabled(running);
    m_showToken->setEnabled(running);
    m_copyCurl->setEnabled(running);
    // The example holds the token: show it only when the token is shown; Copy example always
    // copies the real one.
    const QString shownExample = !running ? QString()
            : m_showToken->isChecked() ? curlExample()
                                       : example(QStringLiteral("<token: Show, or Copy example>"));
    m_curl->setPlainText(running ? shownExample
                                 : tr("Start the server to get a ready curl example. API clients "
                                      "share this window's contexts; their runs appear here live."));
    QString status = running ? tr("Serving the native API v1 on %1 for this user's agents and "
                                  "scripts. Anyone with the token can run code as you.")
                                       .arg(m_server->baseUrl())
                             : tr("The HTTP server is off.");
    if (!m_lastError.isEmpty())
        status += QStringLiteral("\n") + m_lastError;
    m_status->setText(status);
}

} // namespace replhost::gui
