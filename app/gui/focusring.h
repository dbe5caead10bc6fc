// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The lecture's highlight around the step's panel: a ring drawn over the panel's edge by a child
// widget that lets every click through. Not a style sheet: a style sheet on the panel would make its
// children resolve their fonts through the style sheet style, so the projector font set on the panel
// would not reach its labels and charts (issue 20, step 9's roofline labels at ~9 px).

#include <QColor>
#include <QWidget>

namespace napkin::app {

class FocusRing : public QWidget {
    Q_OBJECT
public:
    // Draws a ring of `width` pixels in `color` around `panel`, following its size.
    FocusRing(QWidget* panel, const QColor& color, int width = 4);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    QColor m_color;
    int m_width;
};

} // namespace napkin::app
