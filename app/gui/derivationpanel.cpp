// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "derivationpanel.h"

#include "format.h"
#include "plancontroller.h"
#include "wordbreaks.h"

#include <QTextBrowser>

#include <string_view>
#include <QVBoxLayout>

namespace napkin::app {

DerivationPanel::DerivationPanel(PlanController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_text(new QTextBrowser(this))
{
    setAutoFillBackground(true); // updates stop here instead of repainting the window behind
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->addWidget(m_text);
    m_text->setOpenLinks(false);
    // While a slider is dragged the derivation text follows at most every 100 ms: laying out rich
    // text on every step would cost more than the ledger, table and roofline together.
    m_throttle.setSingleShot(true);
    m_throttle.setInterval(100);
    connect(&m_throttle, &QTimer::timeout, this, &DerivationPanel::updateText);
    connect(controller, &PlanController::planChanged, this, [this] {
        if (!m_throttle.isActive())
            m_throttle.start();
    });
    connect(controller, &PlanController::derivationRequested, this, &DerivationPanel::updateText);
    connect(controller, &PlanController::errorsChanged, this, &DerivationPanel::updateText);
    updateText();
}

QString DerivationPanel::html() const { return m_text->toHtml(); }

void DerivationPanel::updateText()
{
    const auto& plan = m_controller->plan();
    const std::string q = m_controller->selectedQuantity().toStdString();
    QString html;
    for (const auto& d : plan.derivations) {
        if (q != d.quantity)
            continue;
        // The quantity may break after its dots in a narrow panel, never inside a word ("memory.per_gpu.t
        // otal" at 1024x768: issue 20): a zero-width space after each dot, as the reports do (wordbreaks.h).
        const QString id = report::breakAfter(QString::fromLatin1(d.quantity));
        html = QStringLiteral("<p><b>%1</b></p><p><code>%1 = %2</code></p>"
                              "<p><code>= %3</code></p><p><code>= %4</code></p><p><i>Source:</i> %5</p>")
                   .arg(id, QString::fromStdString(core::formulaText(d)).toHtmlEscaped(),
                        QString::fromStdString(core::substitutedText(d)).toHtmlEscaped(),
                        QString::fromStdString(core::resultText(d)).toHtmlEscaped(),
                        QString::fromStdString(core::sourceText(d, plan)).toHtmlEscaped());
        // The activations' derivations name the tensors they sum (memory.activation_tensors).
        const std::string_view quantity = d.quantity;
        if ((quantity == "memory.per_gpu.activations" || quantity == "memory.activations_per_layer") &&
            plan.memory.layerTensors.count > 0)
            html +=
                tr("<p><i>Per layer:</i> %1</p>")
                    .arg(QString::fromStdString(core::savedTensorsSummary(plan.memory.layerTensors)).toHtmlEscaped());
    }
    if (html.isEmpty())
        html = tr("<p>Click a number to see its formula, the values substituted and its source.</p>");
    if (m_controller->hasErrors())
        html.prepend(
            tr("<p style='color:#d32f2f'>The inputs have errors: the numbers shown are the last valid plan.</p>"));
    if (html != m_html) { // unchanged text would still re-layout the document
        m_html = html;
        m_text->setHtml(html);
    }
}

} // namespace napkin::app
