// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "chartwidget.h"

#include "format.h"

#include <QLocale>

#include <cmath>

namespace napkin::charts {

QString formatBytes(double bytes, Units units)
{
    if (units == Units::GiB)
        return QStringLiteral("%1 GiB").arg(bytes / 1073741824.0, 0, 'f', 2);
    return QString::fromStdString(core::formatBytes(bytes));
}

double unitBytes(Units units) { return units == Units::GiB ? 1073741824.0 : 1e9; }

QString formatCount(double v)
{
    const double a = std::fabs(v);
    auto fmt = [](double x, const char* suffix) {
        QString s = QString::number(x, 'g', 4);
        return s + QLatin1String(suffix);
    };
    if (a >= 1e12)
        return fmt(v / 1e12, "T");
    if (a >= 1e9)
        return fmt(v / 1e9, "B");
    if (a >= 1e6)
        return fmt(v / 1e6, "M");
    if (a >= 1e4 && v == std::floor(v))
        return QLocale(QLocale::English).toString(qlonglong(v));
    return QString::number(v, 'g', 6);
}

void ChartWidget::setPlan(const core::Scenario& scenario, const core::Plan& plan, Units units)
{
    m_scenario = &scenario;
    m_plan = &plan;
    m_units = units;
    onPlanSet();
}

} // namespace napkin::charts
