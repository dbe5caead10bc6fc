// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// PlanController owns the scenario document, the last valid Scenario and Plan, the undo stack and
// the file state. Widgets hold no domain state: they call set...() and listen to planChanged().

#include "chartunits.h"
#include "estimate.h"
#include "scenario.h"
#include "search.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>
#include <QTimer>

#include <map>
#include <optional>
#include <string>

class QUndoStack;

namespace napkin::app {

class PlanController : public QObject {
    Q_OBJECT
public:
    using Units = charts::Units;

    explicit PlanController(QObject* parent = nullptr);
    ~PlanController() override;

    // The scenario document as edited (may be invalid), and the last valid scenario and plan.
    const nlohmann::json& document() const { return m_document; }
    const QString& baseDir() const { return m_baseDir; } // resolves the document's relative file paths
    const core::Scenario& scenario() const { return m_scenario; }
    const core::Plan& plan() const { return m_plan; }
    const core::Errors& errors() const { return m_errors; }
    bool hasErrors() const { return !m_errors.empty(); }

    // Sets one dotted path (the napkin-cli --set rules: model.preset / params / hf_config / kind
    // replace the model). Pushes an undo step; consecutive edits of one path merge into one step.
    // The plan is recomputed once per event-loop turn, however many edits arrive (slider drags).
    void set(const QString& path, const nlohmann::json& value);
    // Replaces the whole document (presets, open, new) as one undo step.
    void setDocument(const nlohmann::json& doc, const QString& undoText);
    // Sets a parallel layout (a search result: tp, pp, virtual stages, cp, dp, micro-batch, recompute,
    // ZeRO stage; FSDP off) as one undo step.
    void applyLayout(const core::Layout& layout);
    // Imports a Hugging Face config.json as the model.
    bool importHfConfig(const QString& file, QString* error);

    // Recomputes immediately (tests, benchmarks); normally a zero-delay timer coalesces bursts.
    void recomputeNow();

    // Files (*.napkin.json): the same schema as napkin-cli. save() writes atomically (QSaveFile)
    // and only the keys that differ from the defaults.
    void newScenario();
    // Replaces the document without an undo step (session restore); false when it is invalid.
    bool resetDocument(const nlohmann::json& doc, const QString& fileName);
    bool open(const QString& file, QString* error);
    bool save(const QString& file, QString* error);
    QString fileName() const { return m_fileName; }
    bool isModified() const;
    QStringList recentFiles() const;

    QUndoStack* undoStack() const { return m_undo; }

    // Autosave: while there are unsaved changes the document is written every 20 s (atomically) to
    // autosaveFile(); a clean save, New or Open removes it. recoverAutosave() loads it after a crash.
    static QString autosaveFile();
    bool autosaveNow();
    bool recoverAutosave();

    // Presentation settings shared by every view.
    Units units() const { return m_units; }
    void setUnits(Units u);
    QString formatBytes(double bytes) const; // "13.48 GB" or "12.55 GiB"

    // The derivation the user asked to see (a plan JSON path such as "time.days").
    void showDerivation(const QString& quantity);
    QString selectedQuantity() const { return m_selected; }

    // Internal: used by the undo commands.
    void applyDocument(const nlohmann::json& doc);

signals:
    void planChanged(const napkin::core::Plan& plan);
    void errorsChanged(const napkin::core::Errors& errors);
    void documentChanged();
    void fileStateChanged();
    void unitsChanged();
    void derivationRequested(const QString& quantity);

private:
    void scheduleRecompute();
    void addRecent(const QString& file);
    // Text of a file the scenario refers to (hf_config, calibration:FILE), cached so that a slider
    // drag does not read the disk on every recompute; re-read when its size or time stamp changes.
    std::optional<std::string> cachedFile(const std::string& path, std::string& error);

    struct CachedFile {
        qint64 size = -1;
        qint64 modifiedMs = 0;
        std::string text;
    };
    std::map<std::string, CachedFile> m_files;

    nlohmann::json m_document;
    core::Scenario m_scenario;
    core::Plan m_plan;
    core::Errors m_errors;
    QUndoStack* m_undo = nullptr;
    QTimer m_timer;
    QTimer m_autosave;
    QString m_fileName;
    QString m_baseDir;
    Units m_units = Units::GB;
    QString m_selected = QStringLiteral("memory.per_gpu.total");
};

// The scenario document minus everything equal to the built-in defaults.
nlohmann::json scenarioDiff(const nlohmann::json& defaults, const nlohmann::json& doc);

} // namespace napkin::app
