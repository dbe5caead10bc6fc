// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Every input of the scenario as a control. Edits go to the controller as dotted paths; the panel
// re-reads the controller's document when it changes (undo, open, presets).

#include <nlohmann/json.hpp>

#include <QHash>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace napkin::app {

class PlanController;
class QuantitySlider;

class ControlsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ControlsPanel(PlanController* controller, QWidget* parent = nullptr);

    // For tests and the benchmark: the slider bound to a scenario path ("training.micro_batch").
    QuantitySlider* slider(const QString& path) const { return m_sliders.value(path); }
    QComboBox* combo(const QString& path) const { return m_combos.value(path); }
    QCheckBox* flashCheck() const { return m_flash; }
    QPushButton* importButton() const { return m_import; }

    void syncFromDocument();
    void syncPlanPrecision();
    bool isPlanDefault(const QString& key) const;
    QString planPrecisionId(const QString& key) const;
    // Adds a calibration profile (path as in the scenario) to the GPU chooser, after the catalogue.
    void addGpuProfile(const QString& path, const QString& label);

signals:
    void importRequested();

private:
    QuantitySlider* addSlider(QWidget* box, const QString& path, const QString& label, double min, double max, bool log,
                              bool integer, const QString& unit, const QString& tip);
    QComboBox* addCombo(QWidget* box, const QString& path, const QString& label, const QStringList& ids,
                        const QStringList& names, const QString& tip);
    void editArchitecture(const QString& key, const nlohmann::json& value);
    void updateDerivedLabels();

    PlanController* m_controller;
    QHash<QString, QuantitySlider*> m_sliders;
    QHash<QString, QComboBox*> m_combos;
    QComboBox* m_model = nullptr;
    QuantitySlider* m_params = nullptr;
    QCheckBox* m_flash = nullptr;
    QCheckBox* m_sp = nullptr;
    QLabel* m_layout = nullptr;
    QSpinBox* m_checkpoint = nullptr;
    QPushButton* m_import = nullptr;
    QLabel* m_shape = nullptr;
    QLabel* m_accumulation = nullptr;
    QPushButton* m_chinchilla = nullptr;
    bool m_syncing = false;
};

} // namespace napkin::app
