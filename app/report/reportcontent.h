// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The report's sections as XHTML fragments (shared by the PDF and HTML outputs) and as Markdown.

#include "report.h"
#include "reportcharts.h"

#include "plan.h"
#include "scenario.h"

#include <QString>
#include <QStringList>

namespace napkin::report::detail {

struct Section {
    QString title;               // "" for the header
    QString html;                // XHTML fragment without the title
    QString chart;               // "ledger", "roofline", "timeline", "steptime", "stages": a chart follows
    bool pageBreakAfter = false; // the executive summary is page 1 of a PDF by itself
};

QString esc(const QString& s);
QString num(double v); // 6.738e+09 style for large, 34.3 for small
QString bytesText(double bytes, bool gib);
// An XHTML table, full width; the columns in rightAligned right-aligned; widths: each column's share
// of the width in percent (empty: the layout decides), so that identifiers are not broken mid-word.
QString table(const QStringList& header, const QList<QStringList>& rows, const QList<int>& rightAligned = {},
              const QList<int>& widths = {});

// Header, scenario in words, memory, compute, roofline, derivations, warnings, sensitivity.
std::vector<Section> reportSections(const Evaluated& c, const Options& options);
// Side by side with deltas against the first scenario.
std::vector<Section> comparisonSections(const std::vector<const Evaluated*>& cs, const QStringList& labels,
                                        const Options& options);
QString reportMarkdown(const Evaluated& c, const Options& options, const QString& ledgerPng,
                       const QString& rooflinePng);
QString comparisonMarkdown(const std::vector<const Evaluated*>& cs, const QStringList& labels, const Options& options);

} // namespace napkin::report::detail
