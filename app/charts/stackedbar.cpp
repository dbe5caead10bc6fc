// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "stackedbar.h"

#include "chartstyle.h"

#include <QFontMetrics>

namespace napkin::charts::stackedbar {

int segmentAt(const QVector<double>& values, double value)
{
    if (value < 0)
        return -1;
    double start = 0;
    for (int i = 0; i < values.size(); ++i) {
        if (values[i] > 0 && value < start + values[i])
            return i;
        start += values[i] > 0 ? values[i] : 0;
    }
    return -1;
}

void fitLabels(QCPAxis* valueAxis, const std::vector<QCPItemText*>& labels, const QVector<double>& values,
               double barPixels, const std::function<QStringList(int)>& candidates)
{
    double start = 0;
    for (std::size_t i = 0; i < labels.size() && int(i) < values.size(); ++i) {
        QCPItemText* label = labels[i];
        const double v = values[int(i)];
        const double pixels = valueAxis->coordToPixel(start + v) - valueAxis->coordToPixel(start);
        start += v;
        const QFontMetrics fm(label->font());
        label->setVisible(false);
        if (v <= 0 || barPixels < fm.height() + 2)
            continue;
        for (const QString& text : candidates(int(i))) {
            if (fm.horizontalAdvance(text) + 8 <= pixels) {
                label->setText(text);
                label->setVisible(true);
                break;
            }
        }
    }
}

} // namespace napkin::charts::stackedbar
