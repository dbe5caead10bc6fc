// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How the plan gets its step time: the seeds' "assume an MFU", or predicted from the layout
// (core/steptime.h) over the interconnect, with the network bandwidth between nodes and whether the
// data-parallel gradient traffic overlaps the backward pass. Also opens "Find best layout".

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QPushButton;

namespace napkin::app {

class PlanController;
class QuantitySlider;

class StepTimeControls : public QWidget {
    Q_OBJECT
public:
    explicit StepTimeControls(PlanController* controller, QWidget* parent = nullptr);

    // The MFU slider is only an input in "mfu" mode; in predicted mode it is disabled and says so.
    void setMfuSlider(QuantitySlider* mfu);

    QComboBox* modeCombo() const { return m_mode; }
    QDoubleSpinBox* interNodeBox() const { return m_inter; }
    QCheckBox* overlapCheck() const { return m_overlap; }
    QPushButton* findLayoutButton() const { return m_find; }

    void syncFromDocument();

private:
    void updateMfuSlider();

    PlanController* m_controller;
    QuantitySlider* m_mfu = nullptr;
    QString m_mfuTip;
    QPushButton* m_find = nullptr;
    QComboBox* m_mode = nullptr;
    QDoubleSpinBox* m_inter = nullptr;
    QCheckBox* m_overlap = nullptr;
    bool m_syncing = false;
};

} // namespace napkin::app
