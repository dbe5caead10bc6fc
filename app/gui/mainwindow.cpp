// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include "accuracydialog.h"
#include "calibrationdialog.h"
#include "chartexport.h"
#include "chartstyle.h"
#include "controlspanel.h"
#include "report.h"
#include "jsonreader.h"
#include "derivationpanel.h"
#include "dtypedialog.h"
#include "layoutsearchdialog.h"
#include "makefitdialog.h"
#include "chartpanels.h"
#include "ledgerchart.h"
#include "ledgermodel.h"
#include "lecturecontroller.h"
#include "lecturepanel.h"
#include "reconciledialog.h"
#include "plancontroller.h"
#include "presets.h"
#include "rooflinechart.h"
#include "stagemodel.h"
#include "imbalancechart.h"
#include "stageschart.h"
#include "steptimechart.h"
#include "timelinechart.h"
#include "summarypanel.h"
#include "warningspanel.h"

#include <QActionGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFormLayout>
#include <QLineEdit>
#include <QApplication>
#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QHeaderView>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QStyle>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTimer>
#include <QTableView>
#include <QUndoStack>
#include <QVBoxLayout>

namespace napkin::app {

namespace {
QGroupBox* framed(const QString& title, QWidget* content)
{
    auto* box = new QGroupBox(title);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(4, 4, 4, 4);
    v->addWidget(content);
    return box;
}
const QString kFilter = QObject::tr("Napkin scenarios (*.napkin.json *.json);;All files (*)");
} // namespace

MainWindow::MainWindow(PlanController* controller, QWidget* parent)
    : QMainWindow(parent), m_controller(controller), m_controls(new ControlsPanel(controller)),
      m_ledgerModel(new LedgerModel(controller, this)), m_ledgerTable(new QTableView),
      m_ledgerChart(followPlan(new charts::LedgerChart, controller)),
      m_roofline(followPlan(new charts::RooflineChart, controller)), m_summary(new SummaryPanel(controller)),
      m_derivation(new DerivationPanel(controller)), m_warnings(new WarningsPanel(controller))
{
    setAcceptDrops(true);
    m_baseFontPoints = QApplication::font().pointSize() > 0 ? QApplication::font().pointSize() : 10;

    auto* scroll = new QScrollArea;
    m_controlsScroll = scroll;
    scroll->setWidget(m_controls);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(360);

    m_ledgerTable->setObjectName(QStringLiteral("ledgerTable"));
    m_ledgerTable->setModel(m_ledgerModel);
    m_ledgerTable->verticalHeader()->hide();
    sizeLedgerColumns();
    m_ledgerTable->horizontalHeader()->setSectionResizeMode(LedgerModel::PerParam, QHeaderView::Stretch);
    m_ledgerTable->setTextElideMode(Qt::ElideRight);
    m_ledgerTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_ledgerTable->setAlternatingRowColors(true);
    // The formula column wraps rather than elides (issue 20: "Korthikanti, 281.28 MB per l…"); rows
    // take the height their cells need (8 rows: cheap to measure on each plan).
    m_ledgerTable->setWordWrap(true);
    m_ledgerTable->installEventFilter(this); // its width decides which columns it shows
    m_ledgerTable->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ledgerTable->verticalHeader()->setDefaultSectionSize(m_ledgerTable->fontMetrics().height() + 6);
    connect(m_ledgerTable, &QTableView::clicked, this, [this](const QModelIndex& i) {
        const QString quantity = i.data(LedgerModel::QuantityRole).toString();
        if (i.column() == LedgerModel::Bucket && m_ledgerModel->isActivationsRow(i.row()))
            m_ledgerModel->setActivationsExpanded(!m_ledgerModel->activationsExpanded());
        m_controller->showDerivation(quantity);
    });

    auto* ledger = new QWidget;
    auto* lv = new QVBoxLayout(ledger);
    lv->setContentsMargins(0, 0, 0, 0);
    auto* ledgerSplit = new QSplitter(Qt::Vertical);
    ledgerSplit->addWidget(m_ledgerChart);
    // Per stage: every pipeline stage's tensors, the most loaded one (the ledger's) highlighted.
    m_stageModel = new StageModel(controller, this);
    m_stageTable = new QTableView;
    m_stageTable->setObjectName(QStringLiteral("stageTable"));
    m_stageTable->setModel(m_stageModel);
    m_stageTable->verticalHeader()->hide();
    m_stageTable->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    // "0 (first)" and "3 (last)" whole; the numeric columns share the rest.
    m_stageTable->horizontalHeader()->setSectionResizeMode(StageModel::Stage, QHeaderView::ResizeToContents);
    m_stageTable->setWordWrap(false);
    m_stageTable->verticalHeader()->setDefaultSectionSize(m_stageTable->fontMetrics().height() + 6);
    auto* ledgerTabs = m_ledgerTabs = new QTabWidget;
    ledgerTabs->setDocumentMode(true);
    ledgerTabs->addTab(m_ledgerTable, tr("Most loaded GPU"));
    ledgerTabs->addTab(m_stageTable, tr("Per stage (%1)").arg(m_stageModel->unitName()));
    connect(controller, &PlanController::unitsChanged, this, [this] {
        m_ledgerTabs->setTabText(1, tr("Per stage (%1)").arg(m_stageModel->unitName())); // the cells' unit
    });
    ledgerSplit->addWidget(ledgerTabs);
    ledgerSplit->setStretchFactor(0, 1);
    ledgerSplit->setStretchFactor(1, 1);
    // A shortfall gets a way out (issue 17): the button opens Make it fit, whose Apply sets the change.
    m_fitBar = new QWidget;
    auto* fitLayout = new QHBoxLayout(m_fitBar);
    fitLayout->setContentsMargins(4, 2, 4, 2);
    m_fitLabel = new QLabel;
    m_makeFit = new QPushButton(tr("Make it fit…"));
    m_makeFit->setToolTip(
        tr("The cheapest changes that bring the plan under the GPU's memory (micro-batch, recompute, "
           "ZeRO, 8-bit optimizer, LoRA / QLoRA, offload, more or larger GPUs), each re-planned in full"));
    connect(m_makeFit, &QPushButton::clicked, this, &MainWindow::openMakeFit);
    fitLayout->addWidget(m_fitLabel, 1);
    fitLayout->addWidget(m_makeFit);
    lv->addWidget(m_fitBar);
    auto updateFitBar = [this](const core::Plan& p) {
        m_fitBar->setVisible(!p.memory.fits && !m_controller->hasErrors());
        m_fitLabel->setText(
            tr("Short by %1 per GPU").arg(m_controller->formatBytes(p.memory.total - p.memory.capacity)));
    };
    connect(m_controller, &PlanController::planChanged, this, updateFitBar);
    updateFitBar(m_controller->plan());
    lv->addWidget(ledgerSplit);

    auto* right = new QSplitter(Qt::Vertical);
    auto* top = new QSplitter(Qt::Horizontal);
    m_topSplit = top;
    top->addWidget(m_frames[QStringLiteral("ledger")] = framed(tr("Memory per GPU"), ledger));
    auto* side = new QSplitter(Qt::Vertical);
    m_sideSplit = side;
    // The summary scrolls rather than holding the window taller than a 720-line screen (issue 20).
    auto* summaryScroll = m_summaryScroll = new QScrollArea;
    summaryScroll->setWidget(m_summary);
    summaryScroll->setWidgetResizable(true);
    summaryScroll->setFrameShape(QFrame::NoFrame);
    summaryScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    side->addWidget(m_frames[QStringLiteral("summary")] = framed(tr("Compute and time"), summaryScroll));
    sizeLedgerColumns(); // and the summary's width, now that it has its scroll area
    // The summary has the column's whole height; the derivation sits below the warnings, beside the
    // charts, where it has room for its formula, substituted values and source (at 1280x800 it
    // showed three lines under the summary: issue 20).
    top->addWidget(side);
    top->setStretchFactor(0, 5);
    top->setStretchFactor(1, 2);
    auto* bottom = new QSplitter(Qt::Horizontal);
    m_bottomSplit = bottom;
    m_stepTime = followPlan(new charts::StepTimeChart, controller);
    m_chartTabs = new QTabWidget;
    m_chartTabs->setDocumentMode(true);
    // Short tab titles: all four fit at 1024 px wide (a projector); the tooltips say the rest.
    m_chartTabs->addTab(m_roofline, tr("Roofline"));
    m_chartTabs->setTabToolTip(0, tr("Roofline of one layer's ops, forward and backward"));
    m_chartTabs->addTab(m_stepTime, tr("Step time"));
    m_timeline = followPlan(new charts::TimelineChart, controller);
    m_chartTabs->addTab(m_timeline, tr("Memory through the step"));
    m_imbalance = followPlan(new charts::ImbalanceChart, controller);
    m_chartTabs->addTab(m_imbalance, tr("Routing imbalance"));
    m_chartTabs->setTabToolTip(3,
                               tr("Mixtures of experts: step time and memory as the busiest expert rank's load grows"));
    // The stages side by side as columns (napkin_charts StagesChart), with the room of the chart panel.
    m_chartTabs->addTab(followPlan(new charts::StagesChart, controller), tr("Per stage"));
    m_chartTabs->setTabToolTip(4, tr("Pipeline parallelism: each stage's tensors against the GPU's memory"));
    bottom->addWidget(m_frames[QStringLiteral("roofline")] = framed(tr("Roofline and step time"), m_chartTabs));
    auto* notes = m_notesSplit = new QSplitter(Qt::Vertical);
    notes->addWidget(m_warningsFrame = framed(tr("Warnings"), m_warnings));
    notes->addWidget(m_frames[QStringLiteral("derivation")] = framed(tr("Derivation"), m_derivation));
    notes->setStretchFactor(0, 2);
    notes->setStretchFactor(1, 3);
    notes->setSizes({160, 240});
    bottom->addWidget(notes);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 1);
    // The warnings and the derivation as wide as the summary column above them (a narrow column
    // wraps every word).
    bottom->setSizes({700, 240});
    right->addWidget(top);
    right->addWidget(bottom);
    right->setStretchFactor(0, 11);
    right->setStretchFactor(1, 10);
    right->setSizes({440, 400});

    auto* central = new QSplitter(Qt::Horizontal);
    central->addWidget(scroll);
    central->addWidget(right);
    central->setStretchFactor(1, 1);
    central->setSizes({340, 940});
    setCentralWidget(central);

    // Lecture mode: the presenter panel docks on the right while a walkthrough runs.
    m_lecture = new LectureController(controller, this);
    m_lecturePanel = new LecturePanel(m_lecture, controller);
    m_lectureDock = new QDockWidget(tr("Lecture"), this);
    m_lectureDock->setObjectName(QStringLiteral("lectureDock"));
    m_lectureDock->setFeatures(QDockWidget::NoDockWidgetFeatures);
    m_lectureDock->setTitleBarWidget(new QWidget);
    auto* lectureScroll = new QScrollArea;
    lectureScroll->setWidget(m_lecturePanel);
    lectureScroll->setWidgetResizable(true);
    lectureScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_lectureDock->setWidget(lectureScroll);
    addDockWidget(Qt::RightDockWidgetArea, m_lectureDock);
    m_lectureDock->hide();
    connect(m_lecture, &LectureController::activeChanged, this, &MainWindow::setLectureMode);
    connect(m_lecture, &LectureController::stepChanged, this, [this] {
        const auto* step = m_lecture->currentStep();
        if (!step)
            return;
        highlightPanel(QString::fromLatin1(core::toString(step->focus)));
        m_chartTabs->setCurrentWidget(m_roofline); // the walkthrough's roofline steps need it in view
        m_roofline->setShowSeedOps(step->rooflineOverlay);
    });

    buildMenus();
    addChartMenu(m_ledgerChart->plot(), tr("Memory per GPU"));
    addChartMenu(m_roofline->plot(), tr("Roofline"));
    addChartMenu(m_stepTime->plot(), tr("Step time"));
    addChartMenu(m_imbalance->plot(), tr("Routing imbalance"));
    connect(controller, &PlanController::fileStateChanged, this, &MainWindow::updateTitle);
    connect(controller, &PlanController::errorsChanged, this, [this](const core::Errors& e) {
        if (!e.empty())
            statusBar()->showMessage(QString::fromStdString(core::describe(e.front())));
        else
            statusBar()->clearMessage();
    });
    connect(m_controls, &ControlsPanel::importRequested, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Import Hugging Face config.json"), QString(),
                                                       tr("config.json (*.json)"));
        QString error;
        if (!f.isEmpty() && !m_controller->importHfConfig(f, &error))
            QMessageBox::warning(this, tr("Import failed"), error);
    });
    updateTitle();
    resize(1280, 800);
}

void MainWindow::buildMenus()
{
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), QKeySequence::New, this, [this] {
        if (maybeSave())
            m_controller->newScenario();
    });
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        if (!maybeSave())
            return;
        const QString f = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(), kFilter);
        if (!f.isEmpty())
            openFile(f);
    });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::updateRecentMenu);
    file->addAction(tr("&Save"), QKeySequence::Save, this, [this] {
        if (m_controller->fileName().isEmpty()) {
            const QString f =
                QFileDialog::getSaveFileName(this, tr("Save scenario"), QStringLiteral("plan.napkin.json"), kFilter);
            if (!f.isEmpty())
                saveFile(f);
        } else {
            saveFile(m_controller->fileName());
        }
    });
    file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, [this] {
        const QString f =
            QFileDialog::getSaveFileName(this, tr("Save scenario as"), QStringLiteral("plan.napkin.json"), kFilter);
        if (!f.isEmpty())
            saveFile(f);
    });
    file->addAction(tr("Import Hugging Face config…"), this, [this] { emit m_controls->importRequested(); });
    file->addAction(tr("&Export report…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
        QDialog dialog(this);
        dialog.setWindowTitle(tr("Export report"));
        auto* form = new QFormLayout(&dialog);
        auto* format = new QComboBox;
        format->addItem(tr("PDF (vector charts)"), QStringLiteral("pdf"));
        format->addItem(tr("HTML (one self-contained file)"), QStringLiteral("html"));
        format->addItem(tr("Markdown (charts as PNG beside it)"), QStringLiteral("md"));
        format->addItem(tr("CSV (ledger and op tables)"), QStringLiteral("csv"));
        format->addItem(tr("JSON (the plan)"), QStringLiteral("json"));
        auto* page = new QComboBox;
        page->addItem(tr("A4"));
        page->addItem(tr("Letter"));
        auto* title = new QLineEdit(QString::fromStdString(m_controller->scenario().name));
        title->setPlaceholderText(QString::fromStdString(m_controller->plan().derivedName()));
        form->addRow(tr("Format"), format);
        form->addRow(tr("Page size (PDF)"), page);
        form->addRow(tr("Title"), title);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
        form->addRow(buttons);
        connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        if (dialog.exec() != QDialog::Accepted)
            return;
        const QString ext = format->currentData().toString();
        const QString f =
            QFileDialog::getSaveFileName(this, tr("Export report"), QStringLiteral("napkin-report.") + ext,
                                         tr("%1 (*.%2)").arg(format->currentText(), ext));
        if (f.isEmpty())
            return;
        const QString why = exportReport(f, page->currentIndex() == 1, title->text());
        if (why.isEmpty())
            statusBar()->showMessage(tr("Report written to %1").arg(f), 5000);
        else
            QMessageBox::warning(this, tr("Export failed"), why);
    });
    file->addAction(tr("Export lecture &handout…"), this, [this] {
        if (m_lecture->stepCount() == 0) {
            QString why;
            if (!m_lecture->load(QStringLiteral("cs336-lecture2"), &why)) {
                QMessageBox::warning(this, tr("Export failed"), why);
                return;
            }
        }
        const QString f = QFileDialog::getSaveFileName(this, tr("Export lecture handout"),
                                                       QStringLiteral("lecture-handout.pdf"), tr("PDF (*.pdf)"));
        if (f.isEmpty())
            return;
        const QString why = exportLectureHandout(f, false);
        if (why.isEmpty())
            statusBar()->showMessage(tr("Handout written to %1").arg(f), 5000);
        else
            QMessageBox::warning(this, tr("Export failed"), why);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    auto* edit = menuBar()->addMenu(tr("&Edit"));
    auto* undo = m_controller->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    auto* redo = m_controller->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);

    auto* presets = menuBar()->addMenu(tr("&Presets"));
    // The lecture's worked examples, from resources/presets.json (core::builtinPresets).
    const auto& seeds = core::builtinPresets();
    for (int i = 0; i < int(seeds.size()); ++i)
        presets->addAction(QString::fromStdString(seeds[std::size_t(i)].title), this, [this, i] { applySeedPreset(i); })
            ->setToolTip(QString::fromStdString(seeds[std::size_t(i)].source));

    auto* view = menuBar()->addMenu(tr("&View"));
    auto* units = new QActionGroup(this);
    auto* gb = view->addAction(tr("Decimal GB (10⁹ bytes)"));
    auto* gib = view->addAction(tr("Binary GiB (2³⁰ bytes)"));
    for (auto* a : {gb, gib}) {
        a->setCheckable(true);
        units->addAction(a);
    }
    gb->setChecked(true);
    connect(gb, &QAction::triggered, this, [this] { m_controller->setUnits(PlanController::Units::GB); });
    connect(gib, &QAction::triggered, this, [this] { m_controller->setUnits(PlanController::Units::GiB); });
    view->addSeparator();
    auto* dark = view->addAction(tr("&Dark theme"));
    dark->setCheckable(true);
    connect(dark, &QAction::toggled, this, &MainWindow::setDarkTheme);
    auto* projector = view->addAction(tr("&Projector mode"));
    projector->setCheckable(true);
    projector->setShortcut(QKeySequence(Qt::Key_F5));
    connect(projector, &QAction::toggled, this, &MainWindow::setProjectorMode);
    view->addAction(tr("Larger text"), QKeySequence(Qt::CTRL | Qt::Key_Equal), this, [this] {
        m_zoom = std::min(m_zoom + 2, 16);
        QFont f = QApplication::font();
        f.setPointSize(m_baseFontPoints + m_zoom);
        QApplication::setFont(f);
    });
    view->addAction(tr("Smaller text"), QKeySequence(Qt::CTRL | Qt::Key_Minus), this, [this] {
        m_zoom = std::max(m_zoom - 2, -4);
        QFont f = QApplication::font();
        f.setPointSize(m_baseFontPoints + m_zoom);
        QApplication::setFont(f);
    });
    view->addAction(tr("D&type explorer…"), this, &MainWindow::openDtypeExplorer);
    auto* overlay = view->addAction(tr("Seeds' op table on the roofline"));
    overlay->setCheckable(true);
    connect(overlay, &QAction::toggled, m_roofline, &charts::RooflineChart::setShowSeedOps);
    view->addSeparator();
    view->addAction(tr("&Lecture mode (CS336 lecture 2)"), QKeySequence(Qt::CTRL | Qt::Key_L), this, [this] {
        QString why;
        if (m_lecture->stepCount() == 0 && !m_lecture->load(QStringLiteral("cs336-lecture2"), &why)) {
            QMessageBox::warning(this, tr("Lecture mode"), why);
            return;
        }
        startLecture(0);
    });
    auto* whole = view->addAction(tr("&Whole window in lecture mode"));
    whole->setCheckable(true);
    whole->setShortcut(QKeySequence(Qt::Key_F6));
    whole->setToolTip(tr("In lecture mode, show every panel and the controls instead of the step's panel alone"));
    connect(whole, &QAction::toggled, this, [this](bool on) {
        m_lectureWholeWindow = on;
        applyLectureLayout();
    });
    view->addAction(tr("Open a lecture &walkthrough…"), this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Open a lecture walkthrough"), QString(),
                                                       tr("Napkin lectures (*.json);;All files (*)"));
        QString why;
        if (f.isEmpty())
            return;
        if (!m_lecture->load(f, &why))
            QMessageBox::warning(this, tr("Cannot open walkthrough"), why);
        else
            startLecture(0);
    });

    auto* tools = menuBar()->addMenu(tr("&Tools"));
    tools->addAction(tr("Find best &layout…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L), this,
                     &MainWindow::openLayoutSearch);
    tools->addAction(tr("&Make it fit…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M), this,
                     &MainWindow::openMakeFit);
    tools->addAction(tr("&Reconcile a measured run…"), this, &MainWindow::openReconcile);
    tools->addAction(tr("&Calibrate this GPU…"), this, &MainWindow::openCalibration);

    auto* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("How &accurate is this?"), this, &MainWindow::openAccuracy);
}

CalibrationDialog* MainWindow::openCalibration()
{
    if (!m_calibration) {
        m_calibration = new CalibrationDialog(m_controller, this);
        connect(m_calibration, &CalibrationDialog::profileSaved, m_controls, &ControlsPanel::addGpuProfile);
    }
    m_calibration->show();
    m_calibration->raise();
    return m_calibration;
}

LayoutSearchDialog* MainWindow::openLayoutSearch() { return LayoutSearchDialog::showFor(m_controller, this); }
MakeFitDialog* MainWindow::openMakeFit() { return MakeFitDialog::showFor(m_controller, this); }
AccuracyDialog* MainWindow::openAccuracy() { return AccuracyDialog::showFor(m_controller, this); }

QString MainWindow::exportReport(const QString& file, bool letter, const QString& title)
{
    report::Format format;
    const QString ext = QFileInfo(file).suffix().toLower();
    if (!report::parseFormat(ext, &format))
        return tr("%1: unknown report format (allowed: .pdf, .html, .md, .csv, .json)").arg(file);
    if (m_controller->hasErrors())
        return tr("The inputs have errors; fix them before exporting: %1")
            .arg(QString::fromStdString(core::describe(m_controller->errors().front())));
    report::Options options;
    options.page = letter ? report::PageSize::Letter : report::PageSize::A4;
    options.gib = m_controller->units() == PlanController::Units::GiB;
    options.title = title;
    options.napkinVersion = QApplication::applicationVersion();
    const QString baseDir =
        m_controller->fileName().isEmpty() ? QString() : QFileInfo(m_controller->fileName()).absolutePath();
    return report::writeReport({m_controller->document(), QString(), baseDir}, format, file, options);
}

void MainWindow::addChartMenu(QCustomPlot* plot, const QString& title)
{
    plot->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(plot, &QWidget::customContextMenuRequested, this, [this, plot, title](const QPoint& pos) {
        QMenu menu(this);
        for (const char* ext : {"png", "svg", "pdf"}) {
            const QString e = QLatin1String(ext);
            menu.addAction(tr("Save chart as %1…").arg(e.toUpper()), this, [this, plot, title, e] {
                const QString f = QFileDialog::getSaveFileName(
                    this, tr("Save chart"),
                    title.toLower().replace(QLatin1Char(' '), QLatin1Char('-')) + QLatin1Char('.') + e,
                    tr("%1 (*.%2)").arg(e.toUpper(), e));
                if (f.isEmpty())
                    return;
                const QString why = charts::saveChart(plot, f, plot->size(), title);
                if (!why.isEmpty())
                    QMessageBox::warning(this, tr("Save failed"), why);
            });
        }
        menu.exec(plot->mapToGlobal(pos));
    });
}

void MainWindow::applySeedPreset(int index)
{
    const auto& presets = core::builtinPresets();
    if (index < 0 || index >= int(presets.size()))
        return;
    const auto& p = presets[std::size_t(index)];
    if (p.rooflineSeedOps) {
        m_roofline->setShowSeedOps(true);
        return;
    }
    m_controller->setDocument(core::presetDocument(p), tr("Preset"));
    if (!p.derivation.empty())
        m_controller->showDerivation(QString::fromStdString(p.derivation));
}

// Columns sized to their contents once and again when the font changes (lecture mode, View >
// Larger text), not on each slider step: re-measuring every cell costs more than the rest of the
// table's repaint. The formula column takes what is left and elides.
void MainWindow::sizeLedgerColumns()
{
    // Measured whole: every column shown and none stretched (fitLedgerColumns decides after).
    m_ledgerTable->setColumnHidden(LedgerModel::DType, false);
    m_ledgerTable->setColumnHidden(LedgerModel::PerParam, false);
    m_ledgerTable->horizontalHeader()->setSectionResizeMode(LedgerModel::Bucket, QHeaderView::Interactive);
    m_ledgerTable->resizeColumnsToContents();
    const int pad = m_ledgerTable->fontMetrics().horizontalAdvance(QStringLiteral("00"));
    m_ledgerNatural.clear();
    for (int c = 0; c < LedgerModel::ColumnCount; ++c)
        m_ledgerNatural << m_ledgerTable->columnWidth(c) + pad;
    fitLedgerColumns();
    const int rowHeight = m_ledgerTable->fontMetrics().height() + 6;
    m_ledgerTable->verticalHeader()->setDefaultSectionSize(rowHeight);
    if (m_stageTable) // built after the ledger table
        m_stageTable->verticalHeader()->setDefaultSectionSize(rowHeight);
    if (m_summaryScroll) // as wide as the summary's labels and values, beside its scroll bar
        m_summaryScroll->setMinimumWidth(m_summary->minimumSizeHint().width() +
                                         style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4);
}

// At a narrow width (the ledger has ~290 px in a 1024x768 window) the table drops the columns it has
// no room for rather than hiding them behind a scroll bar (issue 20): first the formula, which the
// Derivation panel shows for the clicked row, then the dtype, which the Precision controls show.
// The bucket names then take the room left; the columns return as the panel widens.
void MainWindow::fitLedgerColumns()
{
    if (m_ledgerNatural.size() != LedgerModel::ColumnCount)
        return;
    auto* header = m_ledgerTable->horizontalHeader();
    const int room = m_ledgerTable->width() - 2 * m_ledgerTable->frameWidth() -
                     style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, m_ledgerTable);
    const auto width = [&](LedgerModel::Column c) { return m_ledgerNatural[c]; };
    const int core = width(LedgerModel::Bucket) + width(LedgerModel::Size) + width(LedgerModel::Share);
    // The formula column wraps: eight average characters a line is the least it reads at.
    const int formulaMin = 8 * m_ledgerTable->fontMetrics().averageCharWidth() +
                           m_ledgerTable->fontMetrics().horizontalAdvance(QStringLiteral("00"));
    const bool dtype = room >= core + width(LedgerModel::DType);
    const bool formula = dtype && room >= core + width(LedgerModel::DType) + formulaMin;
    m_ledgerTable->setColumnHidden(LedgerModel::PerParam, !formula);
    m_ledgerTable->setColumnHidden(LedgerModel::DType, !dtype);
    header->setSectionResizeMode(LedgerModel::Bucket, formula ? QHeaderView::Interactive : QHeaderView::Stretch);
    for (auto c : {LedgerModel::Bucket, LedgerModel::DType, LedgerModel::Size, LedgerModel::Share})
        if (header->sectionResizeMode(c) != QHeaderView::Stretch)
            m_ledgerTable->setColumnWidth(c, width(c));
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_ledgerTable && event->type() == QEvent::Resize)
        fitLedgerColumns();
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::changeEvent(QEvent* event)
{
    QMainWindow::changeEvent(event);
    // Queued: QApplication::setFont reaches the widgets in no set order, and the tables must have
    // their new font before they are measured.
    if (event->type() == QEvent::FontChange && m_ledgerTable && m_stageTable)
        QTimer::singleShot(0, this, &MainWindow::sizeLedgerColumns);
}

void MainWindow::setDarkTheme(bool on)
{
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QPalette p;
    if (on) {
        p.setColor(QPalette::Window, QColor(37, 37, 38));
        p.setColor(QPalette::WindowText, QColor(230, 230, 230));
        p.setColor(QPalette::Base, QColor(30, 30, 30));
        p.setColor(QPalette::AlternateBase, QColor(45, 45, 48));
        p.setColor(QPalette::Text, QColor(230, 230, 230));
        p.setColor(QPalette::Button, QColor(50, 50, 52));
        p.setColor(QPalette::ButtonText, QColor(230, 230, 230));
        p.setColor(QPalette::Highlight, QColor(38, 110, 180));
        p.setColor(QPalette::ToolTipBase, QColor(50, 50, 52));
        p.setColor(QPalette::ToolTipText, QColor(230, 230, 230));
        p.setColor(QPalette::PlaceholderText, QColor(150, 150, 150));
    } else {
        p = QApplication::style()->standardPalette();
    }
    QApplication::setPalette(p);
}

bool MainWindow::openFile(const QString& file)
{
    QString error;
    if (!m_controller->open(file, &error)) {
        QMessageBox::warning(this, tr("Cannot open scenario"), error);
        return false;
    }
    statusBar()->showMessage(tr("Opened %1").arg(file), 4000);
    return true;
}

bool MainWindow::saveFile(const QString& file)
{
    QString error;
    if (!m_controller->save(file, &error)) {
        QMessageBox::warning(this, tr("Cannot save scenario"), error);
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(file), 4000);
    return true;
}

void MainWindow::updateTitle()
{
    const QString name =
        m_controller->fileName().isEmpty() ? tr("Untitled") : QFileInfo(m_controller->fileName()).fileName();
    setWindowTitle(tr("%1%2 — Napkin").arg(name, m_controller->isModified() ? QStringLiteral(" *") : QString()));
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    for (const auto& f : m_controller->recentFiles())
        m_recentMenu->addAction(f, this, [this, f] {
            if (maybeSave())
                openFile(f);
        });
    if (m_recentMenu->isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
}

bool MainWindow::maybeSave()
{
    if (!m_controller->isModified())
        return true;
    const auto answer =
        QMessageBox::question(this, tr("Unsaved changes"), tr("Save the changes to this scenario first?"),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Discard)
        return true;
    QString f = m_controller->fileName();
    if (f.isEmpty())
        f = QFileDialog::getSaveFileName(this, tr("Save scenario"), QStringLiteral("plan.napkin.json"), kFilter);
    return !f.isEmpty() && saveFile(f);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    saveSession();
    QFile::remove(PlanController::autosaveFile()); // saved or deliberately discarded: nothing to recover
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty())
        return;
    const QString file = urls.first().toLocalFile();
    QString error;
    if (file.endsWith(QLatin1String(".napkin.json"))) {
        if (maybeSave())
            openFile(file);
    } else if (!m_controller->importHfConfig(file, &error)) {
        QMessageBox::warning(this, tr("Import failed"), error);
    }
    event->acceptProposedAction();
}

void MainWindow::saveSession()
{
    QSettings s;
    s.setValue(QStringLiteral("session/document"), QString::fromStdString(m_controller->document().dump()));
    s.setValue(QStringLiteral("session/file"), m_controller->fileName());
}

bool MainWindow::restoreSession()
{
    // Unsaved work from a session that ended without saving (a crash, a kill) comes first.
    if (m_controller->recoverAutosave()) {
        statusBar()->showMessage(tr("Recovered unsaved changes from the last session"), 8000);
        return true;
    }
    QSettings s;
    const auto text = s.value(QStringLiteral("session/document")).toString().toStdString();
    if (text.empty())
        return false;
    const auto doc = core::parseJsonLimited(text);
    if (doc.is_discarded() || !doc.is_object())
        return false;
    return m_controller->resetDocument(doc, s.value(QStringLiteral("session/file")).toString());
}

} // namespace napkin::app
