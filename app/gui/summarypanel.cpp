// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "summarypanel.h"

#include "format.h"
#include "plancontroller.h"
#include "quantityslider.h"

#include <QEvent>
#include <QFontMetrics>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include <algorithm>
#include <utility>

namespace napkin::app {

SummaryPanel::SummaryPanel(PlanController* controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    setAutoFillBackground(true); // value changes repaint this panel, not the window behind it
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(6, 6, 6, 6);
    grid->setVerticalSpacing(0);
    struct Item {
        const char* quantity;
        QString label;
        QString tip;
    };
    const Item items[] = {
        {"params.total", tr("Parameters"), tr("Exact count from the architecture, or as given")},
        {"params.trainable", tr("Trainable"),
         tr("Parameters with gradients and optimizer states: all of them, or the LoRA adapters")},
        {"compute.flops_per_token", tr("FLOPs per token"), tr("Model FLOPs per token under the chosen convention")},
        {"compute.training_flops", tr("Training FLOPs"), tr("FLOPs per token × training tokens")},
        {"compute.hardware_flops", tr("Hardware FLOPs"), tr("Including recomputation")},
        {"time.days", tr("Days"), tr("FLOPs / (GPUs × dense peak × MFU)")},
        {"time.gpu_hours", tr("GPU-hours"), tr("Seconds × GPUs / 3600")},
        {"cost.usd", tr("Cost"), tr("GPU-hours × price per GPU-hour")},
        {"cost.energy_kwh", tr("Energy"), tr("GPU-hours × TDP: an upper bound for the GPUs alone")},
        {"time.hfu", tr("MFU / HFU"), tr("HFU counts recomputed FLOPs as well (Korthikanti et al. 2022)")},
        {"time.step_seconds", tr("Step time"),
         tr("One optimizer step: at the assumed MFU, or predicted from the layout (Step time control)")},
        {"hardware.ridge", tr("Ridge point"), tr("Dense peak / memory bandwidth: below it an op waits on memory")},
        {"roofline.max_mfu", tr("Roofline MFU bound"), tr("Model FLOPs over the ideal time of the layer's ops")},
    };
    int row = 0;
    for (const auto& it : items) {
        const QString q = QLatin1String(it.quantity);
        auto* label = new QLabel(it.label);
        label->setToolTip(it.tip);
        auto* value = new QToolButton;
        value->setAutoRaise(true);
        value->setToolTip(it.tip + tr(" (click for the derivation)"));
        value->setCursor(Qt::PointingHandCursor);
        QFont f = value->font();
        f.setBold(true);
        value->setFont(f);
        connect(value, &QToolButton::clicked, this, [this, q] { m_controller->showDerivation(q); });
        // The value sits left-aligned in a fixed-size box (fixValueSizes): a new number re-lays out
        // the box only, never the window.
        auto* box = new QWidget;
        auto* boxLayout = new QHBoxLayout(box);
        boxLayout->setContentsMargins(0, 0, 0, 0);
        boxLayout->addWidget(value);
        boxLayout->addStretch(1);
        grid->addWidget(label, row, 0);
        grid->addWidget(box, row, 1, Qt::AlignLeft);
        m_values.insert(q, value);
        ++row;
    }
    grid->setColumnStretch(1, 1);
    fixValueSizes();
    styleValues();
    connect(controller, &PlanController::planChanged, this, &SummaryPanel::updateValues);
    updateValues();
}

QString SummaryPanel::text(const QString& quantity) const
{
    const auto* b = m_values.value(quantity);
    return b ? b->text() : QString();
}

void SummaryPanel::fixValueSizes()
{
    for (auto* value : std::as_const(m_values)) {
        const QFontMetrics fm(value->font());
        // The widest values the panel shows (core::humanNumber's forms): MFU / HFU and the step in the
        // predicted mode, a parameter count, FLOPs.
        int text = 0;
        for (const QString& sample :
             {tr("0.00 / 0.00 (predicted)"), tr("999 s (predicted)"), QStringLiteral("999.9 B parameters"),
              QStringLiteral("9.99e99 FLOPs"), QStringLiteral("999 K GPU-hours")})
            text = std::max(text, fm.horizontalAdvance(sample));
        const QSize hint = value->sizeHint();
        value->parentWidget()->setFixedSize(text + 12, std::max(hint.height(), fm.height() + 4));
    }
}

void SummaryPanel::styleValues()
{
    // A style sheet fixes a widget's colours when it is polished; give the text colour of the
    // current palette explicitly, and again when the theme changes, so dark mode stays readable.
    const QString sheet = QStringLiteral("QToolButton { padding: 0px 2px; color: %1; }")
                              .arg(palette().color(QPalette::WindowText).name());
    for (auto* value : std::as_const(m_values))
        if (value->styleSheet() != sheet)
            value->setStyleSheet(sheet);
}

void SummaryPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        fixValueSizes(); // projector mode and themes change the font
    if (event->type() == QEvent::PaletteChange)
        styleValues();
}

void SummaryPanel::updateValues()
{
    const auto& p = m_controller->plan();
    auto set = [this](const char* q, const QString& text) { m_values.value(QLatin1String(q))->setText(text); };
    // core::humanNumber: the numbers the text output and the reports print, as people write them.
    auto human = [](double v, core::Quantity q) { return QString::fromStdString(core::humanNumber(v, q)); };
    QString params = human(p.params.total, core::Quantity::Parameters);
    if (p.params.active < p.params.total) // mixture of experts: total and what a token runs through
        params = tr("%1 · %2 active")
                     .arg(QString::fromStdString(core::formatCount(p.params.total)),
                          QString::fromStdString(core::formatCount(p.params.active)));
    set("params.total", params);
    const auto& ft = p.finetune;
    if (ft.adapters > 0) // LoRA / QLoRA: the adapters, their share of all parameters, the method
        set("params.trainable",
            tr("%1 · %2").arg(QString::fromStdString(core::formatCount(ft.trainable)),
                              QString::fromLatin1(ft.method) == QLatin1String("qlora") ? tr("QLoRA") : tr("LoRA")));
    else
        set("params.trainable", tr("all (full training)"));
    set("compute.flops_per_token", human(p.compute.flopsPerToken, core::Quantity::Flops));
    set("compute.training_flops", human(p.compute.trainingFlops, core::Quantity::Flops));
    set("compute.hardware_flops", human(p.compute.hardwareFlops, core::Quantity::Flops));
    set("time.days", human(p.time.days, core::Quantity::Days));
    set("time.gpu_hours", human(p.time.gpuHours, core::Quantity::GpuHours));
    set("cost.usd", human(p.cost.usd, core::Quantity::Usd));
    set("cost.energy_kwh", p.cost.energyKwh > 0 ? human(p.cost.energyKwh, core::Quantity::EnergyKwh) : tr("n/a"));
    // Predicted mode (core/steptime.h): MFU and step time come out of the model instead of going in.
    const QString predicted = p.time.mode == std::string_view("predicted") ? tr(" (predicted)") : QString();
    set("time.hfu", QStringLiteral("%1 / %2").arg(p.time.mfu, 0, 'f', 2).arg(p.time.hfu, 0, 'f', 2) + predicted);
    set("time.step_seconds", human(p.time.stepSeconds, core::Quantity::Seconds) + predicted);
    set("hardware.ridge", QString::number(p.hardware.ridge, 'f', 1) + tr(" FLOP/B"));
    double maxMfu = 0;
    for (const auto& d : p.derivations)
        if (std::string_view(d.quantity) == "roofline.max_mfu")
            maxMfu = d.value;
    set("roofline.max_mfu", maxMfu > 0 ? QString::number(maxMfu, 'f', 2) : tr("n/a"));
}

} // namespace napkin::app
