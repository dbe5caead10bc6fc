#pragma once
// The Napkin window: controls on the left, the three budgets on the right.

#include <QMainWindow>

class QAction;
class QMenu;
class QCustomPlot;
class QTableView;

namespace napkin::app {

class ControlsPanel;
class DerivationPanel;
class LedgerChartPanel;
class LedgerModel;
class PlanController;
class RooflinePanel;
class SummaryPanel;
class WarningsPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(PlanController* controller, QWidget* parent = nullptr);

    ControlsPanel* controls() const { return m_controls; }
    LedgerModel* ledgerModel() const { return m_ledgerModel; }
    QTableView* ledgerTable() const { return m_ledgerTable; }
    LedgerChartPanel* ledgerChart() const { return m_ledgerChart; }
    RooflinePanel* roofline() const { return m_roofline; }
    SummaryPanel* summary() const { return m_summary; }
    DerivationPanel* derivation() const { return m_derivation; }
    WarningsPanel* warnings() const { return m_warnings; }

    // The seeds' worked examples (Presets menu); index as listed there.
    void applySeedPreset(int index);
    void setProjectorMode(bool on);
    void setDarkTheme(bool on);

    bool openFile(const QString& file);
    // Writes a budget report of the current plan (format by extension: .pdf .html .md .csv .json).
    QString exportReport(const QString& file, bool letter, const QString& title);
    bool saveFile(const QString& file);
    // The document and file of the last session (QSettings); false when there is none or it is invalid.
    bool restoreSession();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void addChartMenu(QCustomPlot* plot, const QString& title);
    void updateTitle();
    void updateRecentMenu();
    bool maybeSave();
    void saveSession();

    PlanController* m_controller;
    ControlsPanel* m_controls;
    LedgerModel* m_ledgerModel;
    QTableView* m_ledgerTable;
    LedgerChartPanel* m_ledgerChart;
    RooflinePanel* m_roofline;
    SummaryPanel* m_summary;
    DerivationPanel* m_derivation;
    WarningsPanel* m_warnings;
    QMenu* m_recentMenu = nullptr;
    int m_baseFontPoints = 0;
    int m_zoom = 0;
};

} // namespace napkin::app
