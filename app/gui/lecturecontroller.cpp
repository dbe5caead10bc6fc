// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lecturecontroller.h"

#include "plancontroller.h"

#include <QFile>

#include <algorithm>

namespace napkin::app {

LectureController::LectureController(PlanController* plan, QObject* parent) : QObject(parent), m_plan(plan) {}

bool LectureController::load(const QString& fileOrId, QString* error)
{
    core::Errors errors;
    std::optional<core::Lecture> lecture;
    const auto ids = core::builtinLectureIds();
    if (std::find(ids.begin(), ids.end(), fileOrId.toStdString()) != ids.end()) {
        lecture = core::builtinLecture(fileOrId.toStdString(), errors);
    } else {
        QFile f(fileOrId);
        if (!f.open(QIODevice::ReadOnly)) {
            if (error)
                *error = tr("Cannot open %1: %2 (built-in walkthroughs: %3)")
                             .arg(fileOrId, f.errorString(), QString::fromStdString(ids.front()));
            return false;
        }
        lecture = core::parseLecture(f.readAll().toStdString(), fileOrId.toStdString(), errors);
    }
    if (!lecture) {
        if (error)
            *error = fileOrId + QStringLiteral(": ") +
                     QString::fromStdString(errors.empty() ? std::string("invalid walkthrough")
                                                           : core::describe(errors.front()));
        return false;
    }
    setLecture(std::move(*lecture));
    return true;
}

void LectureController::setLecture(core::Lecture lecture)
{
    m_lecture = std::move(lecture);
    m_index = 0;
}

const core::LectureStep* LectureController::currentStep() const
{
    if (m_index < 0 || m_index >= stepCount())
        return nullptr;
    return &m_lecture.steps[std::size_t(m_index)];
}

void LectureController::start(int step)
{
    if (m_lecture.steps.empty())
        return;
    if (!m_active) {
        m_before = m_plan->document();
        m_active = true;
        emit activeChanged(true);
    }
    goTo(step);
}

void LectureController::stop()
{
    if (!m_active)
        return;
    m_active = false;
    if (m_before) {
        m_plan->setDocument(*m_before, tr("End lecture"));
        m_plan->recomputeNow();
    }
    m_before.reset();
    emit activeChanged(false);
}

void LectureController::next() { goTo(m_index + 1); }
void LectureController::previous() { goTo(m_index - 1); }
void LectureController::first() { goTo(0); }
void LectureController::last() { goTo(stepCount() - 1); }

void LectureController::goTo(int index)
{
    if (!m_active || index < 0 || index >= stepCount())
        return;
    m_index = index;
    const auto& step = m_lecture.steps[std::size_t(index)];
    const nlohmann::json doc = core::lectureStepDocument(step, m_calibration.toStdString(), &m_calibrated);
    m_plan->setDocument(doc, tr("Lecture: %1").arg(QString::fromStdString(step.title)));
    m_plan->recomputeNow();
    if (!step.derivation.empty())
        m_plan->showDerivation(QString::fromStdString(step.derivation));
    emit stepChanged(index);
}

std::vector<core::ExpectCheck> LectureController::checks() const
{
    const auto* step = currentStep();
    if (!step)
        return {};
    return core::checkExpectations(*step, m_plan->scenario(), m_plan->plan());
}

} // namespace napkin::app
