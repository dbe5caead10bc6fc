// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Lecture mode's presenter view: the step's title, narration, the numbers it claims (live: they
// follow the sliders), the derivation in large type, and the dtype explorer or the checkpoint
// curve when the step is about them. While the lecture runs it takes the presenter's keys:
// Page Down / Space (next), Page Up / Backspace (back), Home, End and Esc (leave).

#include <QPalette>
#include <QWidget>

class QLabel;
class QTableWidget;
class QFrame;

namespace napkin::charts {
class CheckpointChart;
}

namespace napkin::app {

class LectureController;
class PlanController;

class LecturePanel : public QWidget {
    Q_OBJECT
public:
    LecturePanel(LectureController* lecture, PlanController* plan, QWidget* parent = nullptr);
    ~LecturePanel() override;

    // The lecture's high-contrast theme: white on black, yellow for the highlighted panel.
    static QPalette highContrastPalette();

    // For tests and screenshots.
    QString titleText() const;
    QString numbersText() const;    // plain text of the numbers table
    QString derivationText() const; // plain text of the derivation
    QTableWidget* dtypeTable() const { return m_dtypeTable; }
    charts::CheckpointChart* checkpointChart() const { return m_chart; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void sizeFormatColumn();
    void onActiveChanged(bool active);
    void refreshStep();
    void refreshLive();
    void updateFonts();

    LectureController* m_lecture;
    PlanController* m_plan;
    QLabel* m_counter;
    QLabel* m_title;
    QLabel* m_narration;
    QLabel* m_note;
    QLabel* m_numbersHeading;
    QLabel* m_numbers;
    QLabel* m_derivationHeading;
    QLabel* m_derivation;
    QFrame* m_dtypeFrame;
    QTableWidget* m_dtypeTable;
    charts::CheckpointChart* m_chart;
    QLabel* m_hint;
    QLabel* m_keys;
    bool m_filtering = false;
};

} // namespace napkin::app
