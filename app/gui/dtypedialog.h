// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The dtype explorer: type a number, see how fp32, fp16, bf16, fp8 E4M3/E5M2, NVFP4 and MXFP4 store it.

#include <QDialog>

class QLabel;
class QLineEdit;
class QTableWidget;

namespace napkin::app {

class DtypeDialog : public QDialog {
    Q_OBJECT
public:
    explicit DtypeDialog(QWidget* parent = nullptr);
    void setValueText(const QString& text);
    QTableWidget* table() const { return m_table; }
    QString errorText() const;

private:
    void update();

    QLineEdit* m_value;
    QLabel* m_error;
    QTableWidget* m_table;
};

} // namespace napkin::app
