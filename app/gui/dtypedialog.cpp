// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "dtypedialog.h"

#include "dtypeexplain.h"
#include "jsonreader.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>

namespace napkin::app {

DtypeDialog::DtypeDialog(QWidget* parent)
    : QDialog(parent), m_value(new QLineEdit(QStringLiteral("1e-8"))), m_error(new QLabel), m_table(new QTableWidget)
{
    setWindowTitle(tr("Dtype explorer"));
    auto* v = new QVBoxLayout(this);
    auto* intro =
        new QLabel(tr("How each format stores a number: the bits (sign | exponent | mantissa), the value kept, "
                      "the relative error and the spacing between neighbours near it. Try 1e-8, 1.001, 448, 65520."));
    intro->setWordWrap(true);
    v->addWidget(intro);
    v->addWidget(m_value);
    m_error->setStyleSheet(QStringLiteral("color: #d32f2f;"));
    v->addWidget(m_error);
    m_table->setColumnCount(6);
    m_table->setHorizontalHeaderLabels(
        {tr("Format"), tr("Bits"), tr("Stored"), tr("Relative error"), tr("Spacing near it"), tr("Note")});
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    v->addWidget(m_table);
    connect(m_value, &QLineEdit::textChanged, this, &DtypeDialog::update);
    resize(900, 340);
    update();
}

void DtypeDialog::setValueText(const QString& text) { m_value->setText(text); }
QString DtypeDialog::errorText() const { return m_error->text(); }

void DtypeDialog::update()
{
    const auto x = core::parseQuantity(m_value->text().trimmed().toStdString());
    if (!x) {
        m_error->setText(tr("“%1” is not a finite number").arg(m_value->text()));
        return; // the last table stays
    }
    m_error->clear();
    const auto all = core::storeInAll(*x);
    m_table->setRowCount(int(all.size()));
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    for (int r = 0; r < int(all.size()); ++r) {
        const auto& s = all[std::size_t(r)];
        const auto& f = core::info(s.type);
        QString note = QString::fromStdString(s.note);
        if (s.underflow)
            note = tr("underflows to zero") + (note.isEmpty() ? QString() : QStringLiteral("; ") + note);
        if (s.overflow)
            note = (f.hasInfinity ? tr("overflows to infinity") : tr("saturates at %1").arg(f.maxFinite)) +
                   (note.isEmpty() ? QString() : QStringLiteral("; ") + note);
        const QString cells[] = {QString::fromLatin1(f.id.data(), qsizetype(f.id.size())),
                                 QString::fromStdString(s.signBits + " | " + s.exponentBits + " | " + s.mantissaBits),
                                 QString::number(s.stored, 'g', 9),
                                 QString::number(s.relativeError, 'g', 3),
                                 QString::number(s.spacing, 'g', 3),
                                 note};
        for (int c = 0; c < 6; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == 1)
                item->setFont(mono);
            m_table->setItem(r, c, item);
        }
    }
}

} // namespace napkin::app
