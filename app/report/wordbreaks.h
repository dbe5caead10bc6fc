// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Break opportunities for long identifiers in wrapped rich text (window panels, reports, the lecture
// handout): a zero-width space (U+200B) where a line may end. Qt's and browsers' line breakers do not
// break inside "memory.per_gpu.optimizer_states" on their own, so a narrow panel either cuts it mid-word
// or grows past the screen (issue 20). U+200B is not text: strip it before comparing strings.

#include <QRegularExpression>
#include <QString>
#include <QStringView>

namespace napkin::report {

// A zero-width space after each character of `after`: "memory.per_gpu.total" -> "memory.|per_gpu.|total".
inline QString breakAfter(QString id, QStringView after = u".")
{
    for (const QChar c : after)
        id.replace(c, QString(c) + QChar(0x200B));
    return id;
}

// Prose and sources ("momentum/AdaGrad/RMSProp", "github:stanford-cs336/...", URLs): after each "/",
// ":", "_" or "." followed by a letter, so never inside a number ("0.5", "3.14").
inline QString breakSourceWords(QString text)
{
    static const QRegularExpression at(QStringLiteral("([/:_.])(?=[A-Za-z])"));
    return text.replace(at, QStringLiteral("\\1\u200B"));
}

} // namespace napkin::report
