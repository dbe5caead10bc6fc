// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A slider over doubles (log or linear scale) with an editable number box that accepts what people
// type: "7B", "15T", "2e12", "4k", "1,024". Invalid text shows an error beside the field; the last
// valid value stays in force.

#include "chartunits.h"

#include <QWidget>

#include <limits>

class QLabel;
class QLineEdit;
class QSlider;

namespace napkin::app {

class QuantitySlider : public QWidget {
    Q_OBJECT
public:
    enum class Scale { Linear, Log };

    QuantitySlider(const QString& label, double min, double max, Scale scale, QWidget* parent = nullptr);

    void setUnit(const QString& unit); // shown after the number box
    void setInteger(bool integer);     // round to whole numbers
    void setDecimals(int decimals);    // display precision for non-integers
    void setValue(double v);           // programmatic: no valueEdited()
    // A marked point on the track (the Chinchilla tokens for this model); NaN hides it.
    void setMarker(double v, const QString& tooltip);
    double marker() const { return m_marker; }
    double value() const { return m_value; }
    double minimum() const { return m_min; }
    double maximum() const { return m_max; }

    QSlider* slider() const { return m_slider; }
    QLineEdit* edit() const { return m_edit; }
    QLabel* errorLabel() const { return m_error; }
    QString errorText() const;

    // Slider position <-> value (exposed for tests and tick marks).
    int positionFor(double v) const;
    double valueAt(int position) const;

signals:
    void valueEdited(double value); // by the user: drag, keys or typed text

private:
    void onSliderMoved(int position);
    void onEdited();
    void showValue();
    QString displayText(double v) const;

    QSlider* m_slider;
    QLineEdit* m_edit;
    QLabel* m_unit;
    QLabel* m_error;
    double m_min, m_max, m_value;
    Scale m_scale;
    bool m_integer = false;
    int m_decimals = 3;
    QString m_label;
    double m_marker = std::numeric_limits<double>::quiet_NaN();
};

using charts::formatCount;

} // namespace napkin::app
