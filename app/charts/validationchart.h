// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The validation set as a chart: one row per published run, its error (predicted / published - 1) as
// a dot on a shared axis, the ±10% and ±25% bands shaded; the runs most like the current scenario
// drawn in the highlight colour. core/validate.h; core::validationToSvg draws the same for napkin-cli.

#include "validate.h"

#include <QStringList>
#include <QWidget>

#include <set>
#include <string>
#include <vector>

class QCustomPlot;

namespace napkin::charts {

class ValidationChart : public QWidget {
    Q_OBJECT
public:
    explicit ValidationChart(QWidget* parent = nullptr);

    // highlighted: ids of the runs to draw in the highlight colour. The results must outlive the call.
    void setResults(const std::vector<core::ValidationResult>& results, const std::set<std::string>& highlighted);
    QCustomPlot* plot() const { return m_plot; }
    // For tests: the plotted rows (run ids, top to bottom) and how many are highlighted.
    QStringList rows() const { return m_rows; }
    int highlightedCount() const { return m_highlighted; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void redraw();

    QCustomPlot* m_plot;
    std::vector<const core::ValidationResult*> m_results;
    std::set<std::string> m_ids;
    QStringList m_rows;
    int m_highlighted = 0;
};

} // namespace napkin::charts
