// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "focusring.h"

#include <QEvent>
#include <QPainter>

namespace napkin::app {

FocusRing::FocusRing(QWidget* panel, const QColor& color, int width) : QWidget(panel), m_color(color), m_width(width)
{
    setObjectName(QStringLiteral("focusRing"));
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setAttribute(Qt::WA_NoSystemBackground);
    setFocusPolicy(Qt::NoFocus);
    setGeometry(panel->rect());
    panel->installEventFilter(this);
    raise();
    show();
}

bool FocusRing::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == parent() && event->type() == QEvent::Resize) {
        setGeometry(parentWidget()->rect());
        raise(); // above children added since
    }
    return QWidget::eventFilter(watched, event);
}

void FocusRing::paintEvent(QPaintEvent* /*event*/)
{
    QPainter p(this);
    QPen pen(m_color, m_width);
    pen.setJoinStyle(Qt::MiterJoin);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    const int half = m_width / 2;
    p.drawRect(rect().adjusted(half, half, -half - (m_width % 2 ? 0 : 1), -half - (m_width % 2 ? 0 : 1)));
}

} // namespace napkin::app
