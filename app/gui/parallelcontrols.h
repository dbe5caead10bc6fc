// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The sharded-data-parallel strategy beside the ZeRO stage: PyTorch FSDP's full, grad-op and hybrid
// shards. Picking a strategy hands the sharding to it (the controller sets parallel.zero to 0), and
// picking a ZeRO stage turns FSDP off, so the UI never produces the parallel.zero/fsdp conflict.

#include <QWidget>

class QComboBox;
class QLabel;

namespace napkin::app {

class PlanController;

class ParallelControls : public QWidget {
    Q_OBJECT
public:
    explicit ParallelControls(PlanController* controller, QWidget* parent = nullptr);

    QComboBox* fsdpCombo() const { return m_fsdp; }
    void syncFromDocument();

private:
    void updateNote();

    PlanController* m_controller;
    QComboBox* m_fsdp = nullptr;
    QLabel* m_note = nullptr;
    bool m_syncing = false;
};

} // namespace napkin::app
