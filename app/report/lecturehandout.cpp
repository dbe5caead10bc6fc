// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lecturehandout.h"

#include "checkpointchart.h"
#include "chartexport.h"
#include "chartstyle.h"
#include "format.h"
#include "reportcharts.h"
#include "reportcontent.h"
#include "wordbreaks.h"

#include <QBuffer>
#include <QPageLayout>
#include <QPainter>
#include <QPen>
#include <QPdfWriter>
#include <QTextDocument>

#include <cmath>

namespace napkin::report {

namespace {

bool isBytesQuantity(const std::string& q)
{
    if (q == "memory.states_bytes_per_param" || q.rfind("fit.", 0) == 0)
        return false;
    return q.rfind("memory.per_gpu.", 0) == 0 || q == "memory.capacity" || q == "memory.headroom" ||
           q == "memory.activations_per_layer" || q.rfind("tensor.bytes", 0) == 0 ||
           q.rfind("checkpoint.bytes_at.", 0) == 0 || q == "checkpoint.min_bytes" ||
           (q.size() > 6 && q.compare(q.size() - 6, 6, ".bytes") == 0);
}

constexpr double kStepGap = 28; // layout units between two steps on one page

bool endsWith(const std::string& s, const char* suffix)
{
    const std::string t(suffix);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

QString grouped(double v) { return QString::fromStdString(core::formatGrouped(std::round(v))); }

} // namespace

QString lectureValueText(const std::string& quantity, double v, bool gib)
{
    if (!std::isfinite(v))
        return QStringLiteral("n/a");
    // A yes-or-no quantity (dtype.<format>.underflow is 1 or 0) reads as people say it.
    if (endsWith(quantity, ".underflow") && (v == 0 || v == 1))
        return v == 1 ? QStringLiteral("yes") : QStringLiteral("no");
    const bool integral = v == std::floor(v) && std::fabs(v) < 1e7;
    if (isBytesQuantity(quantity)) {
        if (std::fabs(v) < 1e7)
            return grouped(v) + QStringLiteral(" bytes");
        return detail::bytesText(v, gib);
    }
    if (integral)
        return grouped(v);
    return std::fabs(v) >= 1e6 ? detail::num(v) : QString::fromStdString(core::formatNumber(v));
}

QString lectureNumbersHtml(const std::vector<core::ExpectCheck>& checks, bool gib)
{
    if (checks.empty())
        return {};
    QString html = QStringLiteral("<table class=\"t\" cellspacing=\"0\" cellpadding=\"4\">");
    for (const auto& c : checks) {
        const QString label = QString::fromStdString(c.expect.label.empty() ? c.expect.quantity : c.expect.label);
        const QString value = c.actual ? lectureValueText(c.expect.quantity, *c.actual, gib) : QStringLiteral("n/a");
        QString claim;
        if (!c.ok)
            claim = QStringLiteral(" <span style=\"color:#e65100\">(the lecture: %1)</span>")
                        .arg(lectureValueText(c.expect.quantity, c.expect.value, gib).toHtmlEscaped());
        html += QStringLiteral("<tr><td>%1</td><td><b>%2</b>%3</td></tr>")
                    .arg(label.toHtmlEscaped(), value.toHtmlEscaped(), claim);
    }
    return html + QStringLiteral("</table>");
}

QString lectureDerivationHtml(const core::Plan& plan, const std::string& quantity)
{
    for (const auto& d : plan.derivations) {
        if (quantity != d.quantity)
            continue;
        // Long words get break opportunities (wordbreaks.h): the quantity after its dots and underscores,
        // the source after "/", ":", "_" or "." before a letter: a projector-sized presenter panel wraps
        // them rather than growing past the screen.
        const QString id = breakAfter(QString::fromLatin1(d.quantity), u"._");
        const QString source = breakSourceWords(QString::fromStdString(core::sourceText(d, plan)).toHtmlEscaped());
        return QStringLiteral("<p><code>%1 = %2</code><br/><code>= %3</code><br/><code>= %4</code></p>"
                              "<p><i>Source:</i> %5</p>")
            .arg(id, QString::fromStdString(core::formulaText(d)).toHtmlEscaped(),
                 QString::fromStdString(core::substitutedText(d)).toHtmlEscaped(),
                 QString::fromStdString(core::resultText(d)).toHtmlEscaped(), source);
    }
    return {};
}

QByteArray renderLectureHandout(const core::Lecture& lecture, const Options& o, const QString& calibrationProfile,
                                QString* error)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    const auto writer = detail::pdfWriter(&buffer, o.page, QString::fromStdString(lecture.title));
    QPdfWriter& pdf = *writer;
    QPainter painter(&pdf);
    const QRect page = pdf.pageLayout().paintRectPixels(pdf.resolution());
    const double W = page.width(), H = page.height();
    const int n = int(lecture.steps.size());
    double y = 0; // where the next step starts on the current page
    for (int i = 0; i < n; ++i) {
        const auto& step = lecture.steps[std::size_t(i)];
        bool calibrated = false;
        const auto doc = core::lectureStepDocument(step, calibrationProfile.toStdString(), &calibrated);
        auto e = detail::evaluate({doc, QString(), QString()}, o.gib);
        if (!e.error.isEmpty()) {
            if (error)
                *error = QStringLiteral("step %1 (%2): %3").arg(i + 1).arg(QString::fromStdString(step.id), e.error);
            return {};
        }
        const detail::Evaluated& c = e;
        QString html;
        if (i == 0)
            html += QStringLiteral("<p style=\"color:#555\">%1%2</p>")
                        .arg(detail::esc(QString::fromStdString(lecture.title)),
                             lecture.description.empty()
                                 ? QString()
                                 : QStringLiteral(": ") + detail::esc(QString::fromStdString(lecture.description)));
        html += QStringLiteral("<h1>%1. %2</h1>").arg(i + 1).arg(detail::esc(QString::fromStdString(step.title)));
        html += QStringLiteral("<p>%1</p>").arg(detail::esc(QString::fromStdString(step.narration)));
        if (step.calibration)
            html += QStringLiteral("<p><i>%1</i></p>")
                        .arg(calibrated
                                 ? QStringLiteral("Peaks measured: calibration profile %1.")
                                       .arg(detail::esc(calibrationProfile))
                                 : detail::esc(QString::fromStdString(
                                       step.fallback.empty() ? std::string("No calibration profile: spec-sheet peaks.")
                                                             : step.fallback)));
        html += QStringLiteral("<h2>The numbers</h2>") +
                lectureNumbersHtml(core::checkExpectations(step, c.scenario, c.plan), o.gib);
        if (!step.derivation.empty())
            html += QStringLiteral("<h2>Derivation</h2>") + lectureDerivationHtml(c.plan, step.derivation);
        if (!step.hint.empty())
            html += QStringLiteral("<p><i>Try:</i> %1</p>").arg(detail::esc(QString::fromStdString(step.hint)));
        html += QStringLiteral("<p style=\"color:#555\">Scenario: %1 (%2, %3 × %4).</p>")
                    .arg(detail::esc(QString::fromStdString(c.scenario.model.name)),
                         detail::esc(QString::fromStdString(c.scenario.precision.plan)),
                         QString::number(c.scenario.cluster.gpus),
                         detail::esc(QString::fromStdString(c.scenario.gpu->name)));
        QTextDocument text;
        QFont f(QStringLiteral("DejaVu Sans"));
        f.setPointSizeF(10);
        text.setDefaultFont(f);
        text.setDefaultStyleSheet(
            QStringLiteral("h1 { font-size: 17pt; } h2 { font-size: 12pt; } td { padding-right: 12px; }"));
        text.setHtml(html);
        text.setTextWidth(W);

        // A chart where the step's focus is one.
        QPicture picture;
        QSize size(900, 420);
        if (step.focus == core::LectureFocus::Ledger) {
            size = QSize(900, 260);
            picture = detail::chartPicture(c, Chart::Ledger, size);
        } else if (step.focus == core::LectureFocus::Roofline) {
            picture = detail::chartPicture(c, Chart::Roofline, size, step.rooflineOverlay);
        } else if (step.focus == core::LectureFocus::Checkpoint) {
            charts::CheckpointChart chart;
            chart.resize(size);
            chart.setCurve(core::checkpointCurveFor(c.scenario), c.plan.memory.checkpointEvery, o.gib);
            picture = charts::plotPicture(chart.plot(), size);
        }
        // Steps follow each other on a page and a step never splits: one that does not fit in
        // what is left of the page starts the next (issue 20: not one mostly blank page a step).
        const double scale = W / size.width();
        const double chartHeight = picture.isNull() ? 0 : size.height() * scale;
        const double block = text.size().height() + (picture.isNull() ? 0 : 8 + chartHeight);
        if (y > 0 && y + block > H) {
            pdf.newPage();
            y = 0;
        }
        if (y > 0) { // a rule between two steps on one page
            painter.save();
            painter.setPen(QPen(QColor(0xc8, 0xcc, 0xd2), 1));
            painter.drawLine(QPointF(0, y - kStepGap / 2), QPointF(W, y - kStepGap / 2));
            painter.restore();
        }
        painter.save();
        painter.translate(0, y);
        text.drawContents(&painter);
        painter.restore();
        if (!picture.isNull()) {
            painter.save();
            painter.translate(0, y + text.size().height() + 8);
            painter.scale(scale, scale);
            painter.drawPicture(0, 0, picture);
            painter.restore();
        }
        y += block + kStepGap;
    }
    painter.end();
    return bytes;
}

QString writeLectureHandout(const core::Lecture& lecture, const QString& outPath, const Options& options,
                            const QString& calibrationProfile)
{
    QString error;
    const QByteArray bytes = renderLectureHandout(lecture, options, calibrationProfile, &error);
    if (!error.isEmpty())
        return error;
    return charts::saveBytes(outPath, bytes);
}

} // namespace napkin::report
