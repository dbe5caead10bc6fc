// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "steptimecontrols.h"

#include "jsonreader.h"
#include "layoutsearchdialog.h"
#include "plancontroller.h"
#include "quantityslider.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QPushButton>
#include <QVBoxLayout>

namespace napkin::app {

namespace {
const nlohmann::json* stepTimeKey(const nlohmann::json& doc, const char* key)
{
    const auto st = doc.find("step_time");
    if (st == doc.end() || !st->is_object())
        return nullptr;
    const auto it = st->find(key);
    return it == st->end() ? nullptr : &*it;
}
} // namespace

StepTimeControls::StepTimeControls(PlanController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller)
{
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    m_find = new QPushButton(tr("Find best layout…"));
    m_find->setToolTip(
        tr("Search every TP, PP, CP, DP, micro-batch, recompute and ZeRO choice for the fastest that fits."));
    connect(m_find, &QPushButton::clicked, this, [this] { LayoutSearchDialog::showFor(m_controller, window()); });
    v->addWidget(m_find);

    auto* rows = new QWidget;
    auto* form = new QFormLayout(rows);
    form->setContentsMargins(0, 0, 0, 0);
    m_mode = new QComboBox;
    m_mode->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_mode->addItem(tr("Assume MFU"), QStringLiteral("mfu"));
    m_mode->addItem(tr("Predict from layout"), QStringLiteral("predicted"));
    m_mode->setToolTip(tr(
        "Take the MFU below as given, or predict the step time from roofline op times, communication and the bubble."));
    form->addRow(tr("Step time"), m_mode);
    m_inter = new QDoubleSpinBox;
    m_inter->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    // step_time.inter_node_bandwidth accepts 1e8 to 1e14 bytes/s (core/scenario.cpp).
    m_inter->setRange(0.1, 100000);
    m_inter->setDecimals(1);
    m_inter->setSuffix(tr(" GB/s"));
    m_inter->setKeyboardTracking(false); // one edit when the number is complete, not one per digit
    m_inter->setToolTip(
        tr("Network bandwidth per GPU, one direction, between nodes (50 GB/s = one 400 Gb/s NIC per GPU)."));
    form->addRow(tr("Between nodes"), m_inter);
    v->addWidget(rows);
    m_overlap = new QCheckBox(tr("Overlap DP communication"));
    m_overlap->setToolTip(
        tr("Hide the data-parallel gradient reduce behind the backward pass where it fits (PyTorch DDP buckets)."));
    v->addWidget(m_overlap);

    connect(m_mode, &QComboBox::activated, this, [this] {
        if (!m_syncing)
            m_controller->set(QStringLiteral("step_time.mode"), m_mode->currentData().toString().toStdString());
    });
    connect(m_inter, &QDoubleSpinBox::valueChanged, this, [this](double gbPerSecond) {
        if (!m_syncing)
            m_controller->set(QStringLiteral("step_time.inter_node_bandwidth"), gbPerSecond * 1e9);
    });
    connect(m_overlap, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_syncing)
            m_controller->set(QStringLiteral("step_time.overlap_dp"), on);
    });
    connect(controller, &PlanController::documentChanged, this, &StepTimeControls::syncFromDocument);
    syncFromDocument();
}

void StepTimeControls::setMfuSlider(QuantitySlider* mfu)
{
    m_mfu = mfu;
    m_mfuTip = mfu ? mfu->toolTip() : QString();
    updateMfuSlider();
}

void StepTimeControls::syncFromDocument()
{
    m_syncing = true;
    const auto& doc = m_controller->document();
    const auto* mode = stepTimeKey(doc, "mode");
    const int index = m_mode->findData(mode && mode->is_string() ? QString::fromStdString(mode->get<std::string>())
                                                                 : QStringLiteral("mfu"));
    if (index >= 0)
        m_mode->setCurrentIndex(index);
    if (const auto* bw = stepTimeKey(doc, "inter_node_bandwidth"))
        if (const auto q = core::jsonQuantity(*bw))
            m_inter->setValue(*q / 1e9);
    // "auto" shows what the framework's rule resolved to (core/framework.h).
    const auto* overlap = stepTimeKey(doc, "overlap_dp");
    m_overlap->setChecked(overlap && overlap->is_boolean() ? overlap->get<bool>()
                                                           : m_controller->scenario().stepTime.overlapDp);
    m_syncing = false;
    updateMfuSlider();
}

void StepTimeControls::updateMfuSlider()
{
    if (!m_mfu)
        return;
    const bool predicted = m_mode->currentData().toString() == QLatin1String("predicted");
    m_mfu->setEnabled(!predicted);
    m_mfu->setToolTip(
        predicted ? tr("Unused while the step time is predicted from the layout; the summary shows the predicted MFU.")
                  : m_mfuTip);
}

} // namespace napkin::app
