// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Napkin window: controls on the left, the three budgets on the right.

#include <QHash>
#include <QMainWindow>
#include <QPalette>
#include <QStringList>

class QAction;
class QMenu;
class QCustomPlot;
class QDockWidget;
class QSplitter;
class QGroupBox;
class QLabel;
class QPushButton;
class QTableView;
class QDialog;
class QScrollArea;
class QTabWidget;

namespace napkin::charts {
class ImbalanceChart;
class LedgerChart;
class RooflineChart;
class StepTimeChart;
class TimelineChart;
} // namespace napkin::charts

namespace napkin::app {

class CalibrationDialog;
class ControlsPanel;
class DerivationPanel;
class LayoutSearchDialog;
class MakeFitDialog;
class AccuracyDialog;
class LedgerModel;
class LectureController;
class LecturePanel;
class PlanController;
class StageModel;
class SummaryPanel;
class WarningsPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(PlanController* controller, QWidget* parent = nullptr);

    ControlsPanel* controls() const { return m_controls; }
    LedgerModel* ledgerModel() const { return m_ledgerModel; }
    QTableView* ledgerTable() const { return m_ledgerTable; }
    charts::LedgerChart* ledgerChart() const { return m_ledgerChart; }
    charts::RooflineChart* roofline() const { return m_roofline; }
    SummaryPanel* summary() const { return m_summary; }
    DerivationPanel* derivation() const { return m_derivation; }
    WarningsPanel* warnings() const { return m_warnings; }
    // Parallelism: the per-stage ledger (a tab beside the ledger table), the step-time chart (a tab
    // beside the roofline) and Tools > Find best layout.
    StageModel* stageModel() const { return m_stageModel; }
    QTableView* stageTable() const { return m_stageTable; }
    QTabWidget* ledgerTabs() const { return m_ledgerTabs; }
    charts::StepTimeChart* stepTime() const { return m_stepTime; }
    charts::TimelineChart* timeline() const { return m_timeline; }
    QTabWidget* chartTabs() const { return m_chartTabs; }
    LayoutSearchDialog* openLayoutSearch();
    // Tabs and dialogs by name (napkin --tab, --dialog; mainwindow_targets.cpp): "ledger", "stages",
    // "roofline", "steptime", "timeline", "imbalance", "stagechart"; "search", "fit", "accuracy", "calibration",
    // "reconcile", "dtype". showTab is false and openDialog null for a name not listed.
    static QStringList tabNames();
    static QStringList dialogNames();
    bool showTab(const QString& name);
    QDialog* openDialog(const QString& name);
    QDialog* openDtypeExplorer();
    QDialog* openReconcile();
    // Tools > Make it fit, and the button beside the ledger's shortfall (shown while the plan is short).
    MakeFitDialog* openMakeFit();
    // Help > How accurate is this?
    AccuracyDialog* openAccuracy();
    QPushButton* makeFitButton() const { return m_makeFit; }

    // The seeds' worked examples (Presets menu); index as listed there.
    void applySeedPreset(int index);
    void setProjectorMode(bool on);
    void setDarkTheme(bool on);

    // Lecture mode (View > Lecture mode, napkin --lecture): projector fonts, a high-contrast
    // theme, full screen (unless disabled, for screenshots), the presenter panel and the focused
    // panel highlighted.
    LectureController* lecture() const { return m_lecture; }
    LecturePanel* lecturePanel() const { return m_lecturePanel; }
    // Tools > Calibrate this GPU: shows the dialog (made once, kept for its table and last message).
    CalibrationDialog* openCalibration();
    void startLecture(int step = 0);
    void setLectureFullScreen(bool on) { m_lectureFullScreen = on; }
    QString highlightedPanel() const { return m_highlighted; } // "ledger", "summary", ... or ""
    // Writes the current walkthrough as a PDF handout; an empty string on success, else why.
    QString exportLectureHandout(const QString& file, bool letter);

    bool openFile(const QString& file);
    // Writes a budget report of the current plan (format by extension: .pdf .html .md .csv .json).
    QString exportReport(const QString& file, bool letter, const QString& title);
    bool saveFile(const QString& file);
    // The document and file of the last session (QSettings); false when there is none or it is invalid.
    bool restoreSession();

protected:
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void sizeLedgerColumns();
    void fitLedgerColumns();
    void addChartMenu(QCustomPlot* plot, const QString& title);
    void updateTitle();
    void updateRecentMenu();
    bool maybeSave();
    void saveSession();
    void setLectureMode(bool on);
    void highlightPanel(const QString& focus);
    void applyLectureLayout();

    PlanController* m_controller;
    ControlsPanel* m_controls;
    LedgerModel* m_ledgerModel;
    QTableView* m_ledgerTable;
    QList<int> m_ledgerNatural; // each column's width at its contents (sizeLedgerColumns)
    charts::LedgerChart* m_ledgerChart;
    charts::RooflineChart* m_roofline;
    SummaryPanel* m_summary;
    DerivationPanel* m_derivation;
    WarningsPanel* m_warnings;
    StageModel* m_stageModel = nullptr;
    QTableView* m_stageTable = nullptr;
    QTabWidget* m_ledgerTabs = nullptr;
    QScrollArea* m_summaryScroll = nullptr;
    QWidget* m_fitBar = nullptr;
    QLabel* m_fitLabel = nullptr;
    QPushButton* m_makeFit = nullptr;
    charts::StepTimeChart* m_stepTime = nullptr;
    charts::ImbalanceChart* m_imbalance = nullptr;
    charts::TimelineChart* m_timeline = nullptr;
    QTabWidget* m_chartTabs = nullptr;
    QMenu* m_recentMenu = nullptr;
    LectureController* m_lecture = nullptr;
    LecturePanel* m_lecturePanel = nullptr;
    CalibrationDialog* m_calibration = nullptr;
    QDockWidget* m_lectureDock = nullptr;
    QHash<QString, QGroupBox*> m_frames; // lecture focus -> the panel's frame
    QGroupBox* m_warningsFrame = nullptr;
    QWidget* m_controlsScroll = nullptr;
    QSplitter* m_topSplit = nullptr;
    QSplitter* m_sideSplit = nullptr;
    QSplitter* m_bottomSplit = nullptr;
    QSplitter* m_notesSplit = nullptr; // warnings above the derivation, beside the charts
    bool m_lectureWholeWindow = false; // View > Whole window in lecture mode (F6)
    QString m_highlighted;
    bool m_lectureFullScreen = true;
    QPalette m_paletteBeforeLecture;
    int m_baseFontPoints = 0;
    int m_zoom = 0;
};

} // namespace napkin::app
