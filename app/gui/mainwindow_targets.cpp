// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The window's tabs and dialogs by name (napkin --tab NAME, --dialog NAME; issue 20): one place that
// maps a name to what the menus and tabs open, so each can be shown, screenshot and tested.
#include "mainwindow.h"

#include "accuracydialog.h"
#include "calibrationdialog.h"
#include "dtypedialog.h"
#include "layoutsearchdialog.h"
#include "makefitdialog.h"
#include "reconciledialog.h"

#include <QTabWidget>

namespace napkin::app {

namespace {

struct TabTarget {
    const char* name;
    bool ledgerSide; // the memory panel's tabs; else the chart panel's
    int index;
};

// The memory panel's two tabs, then the chart panel's five, in the order the window shows them.
constexpr TabTarget kTabs[] = {{"ledger", true, 0},     {"stages", true, 1},    {"roofline", false, 0},
                               {"steptime", false, 1},  {"timeline", false, 2}, {"imbalance", false, 3},
                               {"stagechart", false, 4}};

constexpr const char* kDialogs[] = {"search", "fit", "accuracy", "calibration", "reconcile", "dtype"};

} // namespace

QStringList MainWindow::tabNames()
{
    QStringList names;
    for (const auto& t : kTabs)
        names << QString::fromLatin1(t.name);
    return names;
}

QStringList MainWindow::dialogNames()
{
    QStringList names;
    for (const char* d : kDialogs)
        names << QString::fromLatin1(d);
    return names;
}

bool MainWindow::showTab(const QString& name)
{
    for (const auto& t : kTabs)
        if (name == QLatin1String(t.name)) {
            (t.ledgerSide ? m_ledgerTabs : m_chartTabs)->setCurrentIndex(t.index);
            return true;
        }
    return false;
}

QDialog* MainWindow::openDtypeExplorer()
{
    auto* d = new DtypeDialog(this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

QDialog* MainWindow::openReconcile()
{
    auto* d = new ReconcileDialog(m_controller, this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

QDialog* MainWindow::openDialog(const QString& name)
{
    if (name == QLatin1String("search"))
        return openLayoutSearch();
    if (name == QLatin1String("fit"))
        return openMakeFit();
    if (name == QLatin1String("accuracy"))
        return openAccuracy();
    if (name == QLatin1String("calibration"))
        return openCalibration();
    if (name == QLatin1String("reconcile"))
        return openReconcile();
    if (name == QLatin1String("dtype"))
        return openDtypeExplorer();
    return nullptr;
}

} // namespace napkin::app
