// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "quantityslider.h"

#include "jsonreader.h"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPainter>
#include <QSlider>
#include <QStyle>
#include <QStyleOptionSlider>

#include <cmath>

namespace napkin::app {

namespace {
constexpr int kSteps = 1000;

// A slider that also draws one marker on its track (a small triangle and a tick below the groove).
class MarkedSlider : public QSlider {
public:
    using QSlider::QSlider;
    int markerPosition = -1; // in slider units; -1: none

protected:
    void paintEvent(QPaintEvent* event) override
    {
        QSlider::paintEvent(event);
        if (markerPosition < minimum() || markerPosition > maximum())
            return;
        QStyleOptionSlider opt;
        initStyleOption(&opt);
        const QRect groove = style()->subControlRect(QStyle::CC_Slider, &opt, QStyle::SC_SliderGroove, this);
        const QRect handle = style()->subControlRect(QStyle::CC_Slider, &opt, QStyle::SC_SliderHandle, this);
        const int span = groove.width() - handle.width();
        const int x = groove.left() + handle.width() / 2 +
                      QStyle::sliderPositionFromValue(minimum(), maximum(), markerPosition, span);
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0xd8, 0x6c, 0x00));
        const int y = height() - 1;
        p.drawPolygon(QPolygon({QPoint(x, y - 6), QPoint(x - 4, y), QPoint(x + 4, y)}));
    }
};
} // namespace

QuantitySlider::QuantitySlider(const QString& label, double min, double max, Scale scale, QWidget* parent)
    : QWidget(parent), m_slider(new MarkedSlider(Qt::Horizontal, this)), m_edit(new QLineEdit(this)),
      m_unit(new QLabel(this)), m_error(new QLabel(this)), m_min(min), m_max(max), m_value(min), m_scale(scale),
      m_label(label)
{
    // Opaque, so that a drag repaints this control only, not the group box and panel behind it.
    setAutoFillBackground(true);
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(1);
    auto* name = new QLabel(label, this);
    name->setBuddy(m_edit);
    grid->addWidget(name, 0, 0);
    grid->addWidget(m_unit, 0, 1, Qt::AlignRight);
    grid->addWidget(m_slider, 1, 0);
    grid->addWidget(m_edit, 1, 1);
    grid->addWidget(m_error, 2, 0, 1, 2);
    grid->setColumnStretch(0, 1);
    m_slider->setRange(0, kSteps);
    m_slider->setPageStep(kSteps / 20);
    m_slider->setAccessibleName(label);
    m_edit->setAccessibleName(label);
    m_edit->setFixedWidth(fontMetrics().horizontalAdvance(QStringLiteral("00.000M")) + 12);
    m_error->setWordWrap(true);
    m_unit->setStyleSheet(QStringLiteral("color: palette(placeholder-text);"));
    m_error->setStyleSheet(QStringLiteral("color: #d32f2f;"));
    m_error->hide();
    connect(m_slider, &QSlider::valueChanged, this, &QuantitySlider::onSliderMoved);
    connect(m_edit, &QLineEdit::editingFinished, this, &QuantitySlider::onEdited);
    showValue();
}

void QuantitySlider::setUnit(const QString& unit) { m_unit->setText(unit); }
void QuantitySlider::setInteger(bool integer)
{
    m_integer = integer;
    showValue();
}
void QuantitySlider::setDecimals(int decimals)
{
    m_decimals = decimals;
    showValue();
}

int QuantitySlider::positionFor(double v) const
{
    v = std::clamp(v, m_min, m_max);
    const double f =
        m_scale == Scale::Log ? std::log(v / m_min) / std::log(m_max / m_min) : (v - m_min) / (m_max - m_min);
    return int(std::lround(f * kSteps));
}

double QuantitySlider::valueAt(int position) const
{
    const double f = double(position) / kSteps;
    double v = m_scale == Scale::Log ? m_min * std::pow(m_max / m_min, f) : m_min + f * (m_max - m_min);
    if (m_integer)
        v = std::round(v);
    if (m_scale == Scale::Log && !m_integer) {
        // Round to 3 significant digits so a drag lands on readable values (7.00B, not 7.0132B).
        const double mag = std::pow(10.0, std::floor(std::log10(v)) - 2);
        v = std::round(v / mag) * mag;
    }
    return std::clamp(v, m_min, m_max);
}

QString QuantitySlider::displayText(double v) const
{
    return m_integer || m_scale == Scale::Log ? formatCount(v) : QString::number(v, 'f', m_decimals);
}

void QuantitySlider::setMarker(double v, const QString& tooltip)
{
    m_marker = v;
    auto* s = static_cast<MarkedSlider*>(m_slider);
    s->markerPosition = std::isfinite(v) && v >= m_min && v <= m_max ? positionFor(v) : -1;
    s->setToolTip(tooltip);
    s->update();
}

void QuantitySlider::setValue(double v)
{
    if (v == m_value && m_error->isHidden() && m_edit->text() == displayText(v))
        return; // unchanged: no repaint while another control is dragged
    m_value = v;
    m_error->hide();
    const QSignalBlocker block(m_slider);
    m_slider->setValue(positionFor(v));
    showValue();
}

void QuantitySlider::onSliderMoved(int position)
{
    m_value = valueAt(position);
    m_error->hide();
    showValue();
    emit valueEdited(m_value);
}

QString QuantitySlider::errorText() const
{
    return m_error->isVisible() || !m_error->text().isEmpty() ? m_error->text() : QString();
}

void QuantitySlider::onEdited()
{
    const auto parsed = core::parseQuantity(m_edit->text().trimmed().toStdString());
    QString why;
    if (!parsed)
        why = tr("“%1” is not a number (try 7B, 15T, 2e12, 4k, 1,024)").arg(m_edit->text());
    else if (*parsed < m_min || *parsed > m_max)
        why = tr("%1 must be from %2 to %3").arg(m_label, formatCount(m_min), formatCount(m_max));
    else if (m_integer && *parsed != std::floor(*parsed))
        why = tr("%1 must be a whole number").arg(m_label);
    if (!why.isEmpty()) {
        m_error->setText(why);
        m_error->show();
        return; // the last valid value stays in force
    }
    m_error->clear();
    m_error->hide();
    if (*parsed == m_value) {
        showValue();
        return;
    }
    m_value = *parsed;
    {
        const QSignalBlocker block(m_slider);
        m_slider->setValue(positionFor(m_value));
    }
    showValue();
    emit valueEdited(m_value);
}

void QuantitySlider::showValue()
{
    if (m_edit->hasFocus() && m_error->isVisible())
        return;
    m_edit->setText(displayText(m_value));
}

} // namespace napkin::app
