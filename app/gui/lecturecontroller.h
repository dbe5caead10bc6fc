// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Lecture mode's state: the walkthrough, the current step, and the document from before the
// lecture. Each step's scenario goes through the PlanController (one undo step per move), so the
// sliders stay live inside a step and every panel follows.

#include "lecture.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>

#include <optional>

namespace napkin::app {

class PlanController;

class LectureController : public QObject {
    Q_OBJECT
public:
    explicit LectureController(PlanController* plan, QObject* parent = nullptr);

    // A built-in id ("cs336-lecture2") or a napkin.lecture/1 file; false with a message naming the
    // field on errors (the current lecture stays).
    bool load(const QString& fileOrId, QString* error);
    void setLecture(core::Lecture lecture);
    const core::Lecture& lecture() const { return m_lecture; }

    bool isActive() const { return m_active; }
    int stepIndex() const { return m_index; }
    int stepCount() const { return int(m_lecture.steps.size()); }
    const core::LectureStep* currentStep() const;

    // Starts at a step (remembering the document to restore on stop()), moves, and ends.
    void start(int step = 0);
    void stop();
    void next();
    void previous();
    void first();
    void last();
    void goTo(int index);

    // A napkin.calibration/1 profile used by steps that ask for one ("calibration": true). When the
    // scenario does not accept it the step falls back to the spec sheet.
    void setCalibrationProfile(const QString& path) { m_calibration = path; }
    QString calibrationProfile() const { return m_calibration; }
    bool stepUsesCalibration() const { return m_calibrated; }

    // The current step's claims against the current plan (live: after a slider moved they may no
    // longer hold, which the panel shows).
    std::vector<core::ExpectCheck> checks() const;

signals:
    void stepChanged(int index);
    void activeChanged(bool active);

private:
    PlanController* m_plan;
    core::Lecture m_lecture;
    bool m_active = false;
    int m_index = 0;
    bool m_calibrated = false;
    QString m_calibration;
    std::optional<nlohmann::json> m_before;
};

} // namespace napkin::app
