// SPDX-License-Identifier: Apache-2.0
#include "workspacesettingsdialog.h"

#include "bytesizespinbox.h"

#include "engineclient.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <climits>

namespace replhost::gui {

namespace {

// One row per limit, in the order of the JSON form. Byte counts exceed an int, so they use a
// ByteSizeSpinBox (a QDoubleSpinBox, exact up to 2^53, beyond every limit's range).
struct LimitRow {
    const char *name;
    const char *label;
    const char *suffix;
    bool bytes;
};

const LimitRow kRows[] = {
    {"max_contexts", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Contexts:"), "", false},
    {"timeout_ms", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Time per execution:"), " ms", false},
    {"output_bytes", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Output per execution:"), "", true},
    {"memory_bytes", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Worker memory:"), "", true},
    {"cpu_seconds", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Worker CPU time:"), " s", false},
    {"processes", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Worker processes:"), "", false},
    {"file_size_bytes", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Largest file:"), "", true},
    {"cpu_millicores", QT_TRANSLATE_NOOP("WorkspaceSettingsDialog", "Worker CPU rate:"),
     " millicores", false},
};

qint64 valueOf(const QAbstractSpinBox *box)
{
    if (const auto *ints = qobject_cast<const QSpinBox *>(box))
        return ints->value();
    return qint64(static_cast<const QDoubleSpinBox *>(box)->value());
}

} // namespace

WorkspaceSettingsDialog::WorkspaceSettingsDialog(EngineClient &engine, const QString &workspace,
                                                 QWidget *parent)
    : QDialog(parent)
    , m_engine(engine)
    , m_workspace(workspace.isEmpty() ? core::WorkspaceManager::defaultName() : workspace)
    , m_isolation(new QComboBox(this))
    , m_network(new QCheckBox(tr("Workers may reach the network"), this))
    , m_viewPath(new QLineEdit(this))
    , m_status(new QLabel(tr("Loading the workspace's settings…"), this))
    , m_error(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Settings of Workspace %1").arg(m_workspace));

    auto *form = new QFormLayout;
    for (const LimitRow &row : kRows) {
        const QString name = QLatin1String(row.name);
        QAbstractSpinBox *box = nullptr;
        if (row.bytes) {
            auto *bytes = new ByteSizeSpinBox(this);
            bytes->setRange(0, double(qint64(1) << 50));
            box = bytes;
        } else {
            auto *ints = new QSpinBox(this);
            ints->setRange(0, INT_MAX);
            ints->setSuffix(QLatin1String(row.suffix));
            box = ints;
        }
        box->setObjectName(name);
        box->setSpecialValueText(tr("no limit"));  // shown for 0, the minimum
        box->setAccessibleName(tr(row.label));
        form->addRow(tr(row.label), box);
        m_limits.insert(name, box);
    }
    m_isolation->setObjectName(QStringLiteral("isolation"));
    m_isolation->addItem(tr("None"), QStringLiteral("none"));
    m_isolation->addItem(tr("Sandbox"), QStringLiteral("sandbox"));
    form->addRow(tr("Isolation:"), m_isolation);
    m_network->setObjectName(QStringLiteral("network"));
    m_network->setToolTip(tr("Unless set, a sandboxed workspace has only a loopback of its own "
                             "and an unsandboxed one the host's network"));
    form->addRow(QString(), m_network);
    m_viewPath->setObjectName(QStringLiteral("view_path"));
    m_viewPath->setPlaceholderText(tr("its own path on this machine"));
    m_viewPath->setToolTip(tr("Where a sandbox's code sees its workspace, as a container's code "
                              "sees its home (e.g. /home/user): HOME and the working directory are "
                              "there, and /tmp is kept in the workspace"));
    m_viewPath->setAccessibleName(tr("Workspace seen at"));
    form->addRow(tr("Workspace seen at:"), m_viewPath);
    // Until someone sets it, the network follows the isolation (WorkspaceSettings::network).
    connect(m_isolation, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_loaded.networkChosen && !m_networkTouched)
            m_network->setChecked(m_isolation->currentData().toString() != QLatin1String("sandbox"));
    });
    // A view exists only inside a sandbox; the engine refuses one without it.
    connect(m_isolation, &QComboBox::currentIndexChanged, this, [this] { setFieldsEnabled(m_isLoaded); });
    connect(m_network, &QCheckBox::clicked, this, [this] { m_networkTouched = true; });

    auto *note = new QLabel(tr("Changes apply to contexts created, runs started and workers "
                               "started after them; running workers keep their limits."),
                            this);
    note->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("status"));
    m_error->setObjectName(QStringLiteral("error"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setForegroundRole(QPalette::BrightText);
    m_error->hide();

    connect(m_buttons, &QDialogButtonBox::accepted, this, &WorkspaceSettingsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(m_status);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);

    setFieldsEnabled(false);
    // Last: the engine in this process answers at once, into the fields made above.
    QPointer<WorkspaceSettingsDialog> self(this);
    m_engine.workspaceSettings(m_workspace, [self](Result<core::WorkspaceSettings> settings) {
        if (!self)
            return;
        self->m_status->hide();
        if (!settings) {
            self->showError(settings.error().message);
            emit self->loaded(false);
            return;
        }
        self->fill(*settings);
        self->m_isLoaded = true;
        self->setFieldsEnabled(true);
        emit self->loaded(true);
    });
}

void WorkspaceSettingsDialog::fill(const core::WorkspaceSettings &settings)
{
    m_loaded = settings;
    const QJsonObject limits = m_loaded.toJson().value(QLatin1String("limits")).toObject();
    for (auto it = m_limits.cbegin(); it != m_limits.cend(); ++it) {
        const qint64 value = limits.value(it.key()).toInteger();
        if (auto *ints = qobject_cast<QSpinBox *>(it.value()))
            ints->setValue(int(value));
        else
            static_cast<QDoubleSpinBox *>(it.value())->setValue(double(value));
    }
    {
        // Shown as it is: the network follows a change of the isolation, not its display.
        const QSignalBlocker quiet(m_isolation);
        m_isolation->setCurrentIndex(
            m_loaded.isolation == core::WorkspaceSettings::Isolation::Sandbox ? 1 : 0);
    }
    m_network->setChecked(m_loaded.network);
    m_viewPath->setText(m_loaded.viewPath);
}

void WorkspaceSettingsDialog::setFieldsEnabled(bool enabled)
{
    for (QAbstractSpinBox *box : std::as_const(m_limits))
        box->setEnabled(enabled);
    m_isolation->setEnabled(enabled);
    m_network->setEnabled(enabled);
    m_viewPath->setEnabled(enabled && m_isolation->currentData().toString() == QLatin1String("sandbox"));
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(enabled && !m_applying);
}

void WorkspaceSettingsDialog::showError(const QString &message)
{
    m_error->setText(message);
    m_error->show();
}

void WorkspaceSettingsDialog::apply(std::function<void(Result<core::WorkspaceSettings>)> done)
{
    if (!m_isLoaded || m_applying) {
        if (done)
            done(makeError(QStringLiteral("busy"), m_isLoaded ? tr("A change is being applied already")
                                                              : tr("The settings have not been read yet")));
        return;
    }
    // Only what changed, so a field the workspace leaves to the server's default keeps
    // following it.
    const QJsonObject before = m_loaded.toJson();
    const QJsonObject beforeLimits = before.value(QLatin1String("limits")).toObject();
    QJsonObject limits;
    for (auto it = m_limits.cbegin(); it != m_limits.cend(); ++it) {
        const qint64 value = valueOf(it.value());
        if (value != beforeLimits.value(it.key()).toInteger())
            limits.insert(it.key(), value);
    }
    QJsonObject patch;
    if (!limits.isEmpty())
        patch.insert(QStringLiteral("limits"), limits);
    const QString isolation = m_isolation->currentData().toString();
    if (isolation != before.value(QLatin1String("isolation")).toString())
        patch.insert(QStringLiteral("isolation"), isolation);
    const bool followed = isolation != QLatin1String("sandbox");  // what it is unless set
    if (m_loaded.networkChosen ? m_network->isChecked() != m_loaded.network
                               : m_network->isChecked() != followed)
        patch.insert(QStringLiteral("network"), m_network->isChecked());
    // Empty removes the view; without a sandbox a view cannot be kept (nor was one shown).
    const QString viewPath = m_viewPath->isEnabled() ? m_viewPath->text().trimmed() : QString();
    if (viewPath != m_loaded.viewPath)
        patch.insert(QStringLiteral("view_path"), viewPath.isEmpty() ? QJsonValue() : QJsonValue(viewPath));

    m_applying = true;
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
    QPointer<WorkspaceSettingsDialog> self(this);
    m_engine.changeWorkspaceSettings(m_workspace, patch, [self, done](Result<core::WorkspaceSettings> changed) {
        if (self) {
            self->m_applying = false;
            if (changed) {
                self->m_loaded = *changed;
                self->m_error->clear();
                self->m_error->hide();
            } else {
                self->showError(changed.error().message);
            }
            self->setFieldsEnabled(true);
        }
        if (done)
            done(changed);
        if (self)
            emit self->applied(bool(changed));
    });
}

QString WorkspaceSettingsDialog::errorText() const
{
    return m_error->text();
}

void WorkspaceSettingsDialog::accept()
{
    QPointer<WorkspaceSettingsDialog> self(this);
    apply([self](const Result<core::WorkspaceSettings> &changed) {
        if (self && changed)
            self->QDialog::accept();
    });
}

} // namespace replhost::gui
