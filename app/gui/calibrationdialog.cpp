// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "calibrationdialog.h"

#include "calibration.h"
#include "format.h"
#include "plancontroller.h"

#include <algorithm>

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace napkin::app {

namespace {

QString rate(double v, const std::string& unit)
{
    if (v <= 0)
        return QStringLiteral("—");
    // TB/s and TFLOP/s, the units of the spec sheets, to four significant digits (a measurement's
    // run-to-run spread is about 1 %: more digits are noise).
    return QString::number(v / 1e12, 'g', 4) + (unit == "B/s" ? QStringLiteral(" TB/s") : QStringLiteral(" TFLOP/s"));
}

} // namespace

CalibrationDialog::CalibrationDialog(PlanController* controller, QWidget* parent)
    : QDialog(parent), m_controller(controller), m_runner(new CalibrationRunner(this))
{
    setWindowTitle(tr("Calibrate this GPU"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("napkin-probe measures this machine's GPU (memory bandwidth, dense GEMM peaks per "
                                "dtype, roofline points) in about 10 s. The measured values replace the spec "
                                "sheet's in the plan; the spec values stay beside them."));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_probe = new QLabel;
    m_probe->setWordWrap(true);
    m_probe->setTextInteractionFlags(Qt::TextSelectableByMouse);
    const QString probe = CalibrationRunner::probePath();
    m_probe->setText(probe.isEmpty() ? tr("Probe: not found (set NAPKIN_PROBE)") : tr("Probe: %1").arg(probe));
    layout->addWidget(m_probe);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    layout->addWidget(m_progress);
    m_step = new QLabel;
    layout->addWidget(m_step);
    m_message = new QLabel;
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_message);
    m_tableTitle = new QLabel;
    layout->addWidget(m_tableTitle);
    m_table = new QTableWidget(0, 4);
    m_table->setHorizontalHeaderLabels({tr("Quantity"), tr("Measured"), tr("Spec"), tr("Achieved")});
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 4; ++c) // numbers never wrap or elide
        m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setMinimumHeight(200);
    layout->addWidget(m_table, 1);
    m_conditions = new QLabel;
    m_conditions->setWordWrap(true);
    m_conditions->setToolTip(tr("NVML during napkin-probe's GEMM steps: held at the board's power limit "
                                "(sw_power_cap), the clock a long training run sees"));
    layout->addWidget(m_conditions);

    auto* buttons = new QDialogButtonBox;
    m_calibrate = buttons->addButton(tr("Calibrate"), QDialogButtonBox::ActionRole);
    m_cancel = buttons->addButton(QDialogButtonBox::Cancel);
    m_cancel->setEnabled(false);
    buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);
    connect(m_calibrate, &QPushButton::clicked, this, &CalibrationDialog::startCalibration);
    connect(m_cancel, &QPushButton::clicked, m_runner, &CalibrationRunner::cancel);
    connect(buttons, &QDialogButtonBox::rejected, this, [this] {
        if (!m_runner->isRunning()) // Escape while running cancels instead of closing
            reject();
        else
            m_runner->cancel();
    });
    connect(buttons->button(QDialogButtonBox::Close), &QPushButton::clicked, this, [this] {
        m_runner->cancel();
        accept();
    });
    connect(m_runner, &CalibrationRunner::progress, this, [this](double f, const QString& step) {
        m_progress->setValue(int(f * 1000));
        m_step->setText(tr("Measuring: %1").arg(step));
    });
    connect(m_runner, &CalibrationRunner::finished, this, &CalibrationDialog::onFinished);
    connect(controller, &PlanController::planChanged, this, &CalibrationDialog::updateTable);
    // Room for the whole measured-vs-spec table (12 rows) in the dialog's font, within a 1024x768 screen.
    resize(fontMetrics().averageCharWidth() * 110, std::min(fontMetrics().height() * 38, 700));
    updateTable();
}

QString CalibrationDialog::messageText() const { return m_message->text(); }

void CalibrationDialog::startCalibration()
{
    m_message->clear();
    m_progress->setValue(0);
    m_calibrate->setEnabled(false);
    m_cancel->setEnabled(true);
    if (!m_runner->start()) {
        m_calibrate->setEnabled(true);
        m_cancel->setEnabled(false);
    }
}

void CalibrationDialog::onFinished(CalibrationRunner::Outcome outcome, const QString& message)
{
    m_calibrate->setEnabled(true);
    m_cancel->setEnabled(false);
    m_step->clear();
    m_message->setText(message);
    if (outcome != CalibrationRunner::Outcome::Saved) {
        m_progress->setValue(0);
        return;
    }
    m_progress->setValue(1000);
    const QString path = m_runner->savedPath();
    const QString id = QStringLiteral("calibration:") + path;
    emit profileSaved(path, m_runner->savedLabel());
    m_controller->set(QStringLiteral("cluster.gpu"), id.toStdString());
    m_controller->recomputeNow();
}

void CalibrationDialog::updateTable()
{
    const auto& gpu = m_controller->plan().hardware.gpu;
    m_table->setRowCount(0);
    m_conditions->setText(gpu && gpu->calibration
                              ? QString::fromStdString(core::calibrationConditionsSummary(*gpu->calibration))
                              : QString());
    m_conditions->setVisible(!m_conditions->text().isEmpty());
    if (!gpu || !gpu->calibration) {
        m_tableTitle->setText(
            tr("The plan uses spec-sheet values (%1).").arg(QString::fromStdString(gpu ? gpu->name : std::string())));
        return;
    }
    const auto& cal = *gpu->calibration;
    m_tableTitle->setText(
        tr("Measured vs spec: %1 (%2)")
            .arg(QString::fromStdString(cal.measuredDevice().name), QString::fromStdString(cal.path)));
    for (const auto& r : core::calibrationRows(cal)) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        const QString used = r.planned ? tr(" (planned)") : QString();
        m_table->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(r.quantity) + used));
        m_table->setItem(row, 1, new QTableWidgetItem(rate(r.measured, r.unit)));
        m_table->setItem(row, 2, new QTableWidgetItem(rate(r.spec, r.unit)));
        m_table->setItem(row, 3,
                         new QTableWidgetItem(r.achieved() > 0 ? QString::number(r.achieved() * 100, 'f', 1) + u'%'
                                                               : QStringLiteral("—")));
        for (int c = 1; c < 4; ++c)
            m_table->item(row, c)->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (!r.result.empty())
            m_table->item(row, 0)->setToolTip(QString::fromStdString(r.result));
    }
}

} // namespace napkin::app
