// SPDX-License-Identifier: Apache-2.0
#include "findbar.h"

#include "codeeditor.h"

#include <QGridLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QToolButton>

namespace replhost::gui {

FindBar::FindBar(QWidget *parent)
    : QWidget(parent)
    , m_find(new QLineEdit(this))
    , m_replace(new QLineEdit(this))
    , m_case(new QToolButton(this))
    , m_word(new QToolButton(this))
    , m_regex(new QToolButton(this))
    , m_replaceOne(new QToolButton(this))
    , m_replaceAll(new QToolButton(this))
    , m_replaceLabel(new QLabel(tr("Replace:"), this))
    , m_status(new QLabel(this))
{
    setObjectName(QStringLiteral("findBar"));
    m_find->setObjectName(QStringLiteral("findField"));
    m_replace->setObjectName(QStringLiteral("replaceField"));
    m_find->setPlaceholderText(tr("Find (Enter: next, Shift+Enter: previous)"));
    m_replace->setPlaceholderText(tr("Replace with"));
    m_find->setClearButtonEnabled(true);
    // Compact toggles, as editors show them, so the bar fits a narrow editor.
    const auto option = [](QToolButton *button, const QString &text, const QString &tip) {
        button->setText(text);
        button->setToolTip(tip);
        button->setCheckable(true);
        button->setAutoRaise(true);
    };
    option(m_case, QStringLiteral("Aa"), tr("Match case"));
    option(m_word, QStringLiteral("W"), tr("Whole words"));
    option(m_regex, QStringLiteral(".*"), tr("Regular expression"));
    m_find->setMinimumWidth(120);
    m_replace->setMinimumWidth(120);
    m_replaceOne->setText(tr("Replace"));
    m_replaceAll->setText(tr("Replace All"));
    auto *previous = new QToolButton(this);
    previous->setText(QStringLiteral("↑"));
    previous->setAutoRaise(true);
    previous->setToolTip(tr("Previous match (Shift+F3)"));
    auto *next = new QToolButton(this);
    next->setText(QStringLiteral("↓"));
    next->setAutoRaise(true);
    next->setToolTip(tr("Next match (F3)"));
    auto *close = new QToolButton(this);
    close->setText(QStringLiteral("✕"));
    close->setToolTip(tr("Close (Esc)"));
    close->setAutoRaise(true);
    m_status->setMinimumWidth(m_status->fontMetrics().horizontalAdvance(tr("No match")) + 8);

    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(6, 3, 6, 3);
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(3);
    grid->addWidget(new QLabel(tr("Find:"), this), 0, 0);
    grid->addWidget(m_find, 0, 1);
    grid->addWidget(previous, 0, 2);
    grid->addWidget(next, 0, 3);
    grid->addWidget(m_case, 0, 4);
    grid->addWidget(m_word, 0, 5);
    grid->addWidget(m_regex, 0, 6);
    grid->addWidget(m_status, 0, 7);
    grid->addWidget(close, 0, 8);
    grid->addWidget(m_replaceLabel, 1, 0);
    grid->addWidget(m_replace, 1, 1);
    grid->addWidget(m_replaceOne, 1, 2, 1, 2);
    grid->addWidget(m_replaceAll, 1, 4, 1, 3);
    grid->setColumnStretch(1, 1);

    m_find->installEventFilter(this);
    m_replace->installEventFilter(this);
    connect(m_find, &QLineEdit::textEdited, this, [this] { find(true, true); });
    connect(previous, &QToolButton::clicked, this, &FindBar::findPrevious);
    connect(next, &QToolButton::clicked, this, &FindBar::findNext);
    connect(m_replaceOne, &QToolButton::clicked, this, &FindBar::replaceOne);
    connect(m_replaceAll, &QToolButton::clicked, this, &FindBar::replaceAll);
    connect(close, &QToolButton::clicked, this, &FindBar::closeBar);
    for (QToolButton *toggle : {m_case, m_word, m_regex})
        connect(toggle, &QToolButton::toggled, this, [this] { find(true, true); });
    hide();
}

void FindBar::setEditor(CodeEditor *editor)
{
    m_editor = editor;
    m_status->clear();
}

void FindBar::showFind()
{
    open(false);
}

void FindBar::showReplace()
{
    open(true);
}

void FindBar::open(bool withReplace)
{
    if (m_editor && m_editor->hasSelectedText()) {
        const QString selected = m_editor->selectedText();
        if (!selected.contains(QLatin1Char('\n')))
            m_find->setText(m_regex->isChecked() ? QRegularExpression::escape(selected) : selected);
    }
    for (QWidget *part : std::initializer_list<QWidget *>{m_replaceLabel, m_replace, m_replaceOne, m_replaceAll})
        part->setVisible(withReplace);
    show();
    m_find->setFocus();
    m_find->selectAll();
}

void FindBar::closeBar()
{
    hide();
    m_status->clear();
    if (m_editor)
        m_editor->setFocus();
}

QString FindBar::statusText() const
{
    return m_status->text();
}

bool FindBar::find(bool forward, bool fromSelectionStart)
{
    if (!m_editor || m_find->text().isEmpty()) {
        m_status->clear();
        return false;
    }
    int line = 0, index = 0, endLine = 0, endIndex = 0;
    if (m_editor->hasSelectedText()) {
        m_editor->getSelection(&line, &index, &endLine, &endIndex);
        // Onwards from the match shown (or, as the text is typed, from where it starts); back
        // from its start.
        if (forward && !fromSelectionStart) {
            line = endLine;
            index = endIndex;
        }
    } else {
        m_editor->getCursorPosition(&line, &index);
    }
    const bool found = m_editor->findFirst(m_find->text(), m_regex->isChecked(), m_case->isChecked(),
                                           m_word->isChecked(), true, forward, line, index, true);
    m_status->setText(found ? QString() : tr("No match"));
    return found;
}

bool FindBar::findNext()
{
    if (isHidden())
        open(m_replace->isVisible());
    return find(true, false);
}

bool FindBar::findPrevious()
{
    if (isHidden())
        open(m_replace->isVisible());
    return find(false, false);
}

bool FindBar::selectionIsMatch() const
{
    if (!m_editor || !m_editor->hasSelectedText() || m_find->text().isEmpty())
        return false;
    const QString selected = m_editor->selectedText();
    if (!m_regex->isChecked())
        return selected.compare(m_find->text(), m_case->isChecked() ? Qt::CaseSensitive : Qt::CaseInsensitive) == 0;
    QRegularExpression re(QStringLiteral("\\A(?:%1)\\z").arg(m_find->text()),
                          m_case->isChecked() ? QRegularExpression::NoPatternOption
                                              : QRegularExpression::CaseInsensitiveOption);
    return re.isValid() && re.match(selected).hasMatch();
}

bool FindBar::replaceOne()
{
    if (!m_editor)
        return false;
    if (selectionIsMatch()) {
        // Scintilla's own replace: it knows the last match (and a regular expression's groups).
        int line = 0, index = 0, endLine = 0, endIndex = 0;
        m_editor->getSelection(&line, &index, &endLine, &endIndex);
        if (m_editor->findFirst(m_find->text(), m_regex->isChecked(), m_case->isChecked(), m_word->isChecked(),
                                false, true, line, index, false))
            m_editor->replace(m_replace->text());
    }
    return find(true, false);
}

int FindBar::replaceAll()
{
    if (!m_editor || m_find->text().isEmpty())
        return 0;
    int count = 0;
    // A pattern can match the empty string (^, x*): never more replacements than characters.
    const int limit = int(m_editor->text().size()) + 1;
    m_editor->beginUndoAction();
    bool found = m_editor->findFirst(m_find->text(), m_regex->isChecked(), m_case->isChecked(),
                                     m_word->isChecked(), false, true, 0, 0, false);
    while (found && count < limit) {
        m_editor->replace(m_replace->text());
        ++count;
        found = m_editor->findNext();
    }
    m_editor->endUndoAction();
    m_status->setText(tr("%n replaced", nullptr, count));
    return count;
}

bool FindBar::eventFilter(QObject *watched, QEvent *event)
{
    if (watched != m_find && watched != m_replace)
        return QWidget::eventFilter(watched, event);
    if (event->type() != QEvent::ShortcutOverride && event->type() != QEvent::KeyPress)
        return QWidget::eventFilter(watched, event);
    auto *key = static_cast<QKeyEvent *>(event);
    const bool enter = key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
    const Qt::KeyboardModifiers modifiers = key->modifiers() & ~Qt::KeypadModifier;
    // Enter and Shift+Enter are the field's, not the window's Run actions; Esc closes the bar.
    const bool ours = (enter && (modifiers == Qt::NoModifier || modifiers == Qt::ShiftModifier))
                      || (key->key() == Qt::Key_Escape && modifiers == Qt::NoModifier);
    if (!ours)
        return QWidget::eventFilter(watched, event);
    if (event->type() == QEvent::ShortcutOverride) {
        event->accept();
        return true;
    }
    if (key->key() == Qt::Key_Escape)
        closeBar();
    else if (watched == m_replace && modifiers == Qt::NoModifier)
        replaceOne();
    else if (modifiers == Qt::ShiftModifier)
        findPrevious();
    else
        findNext();
    return true;
}

} // namespace replhost::gui
