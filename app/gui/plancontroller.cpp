// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "plancontroller.h"

#include "format.h"
#include "jsonreader.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QDateTime>
#include <QDir>
#include <QSettings>
#include <QStandardPaths>
#include <QUndoCommand>
#include <QUndoStack>

namespace napkin::app {

namespace {

// One undo step: the whole document before and after. Consecutive edits of one path merge, so a
// slider drag undoes in one step.
class DocumentCommand : public QUndoCommand {
public:
    DocumentCommand(PlanController* c, nlohmann::json before, nlohmann::json after, const QString& text, int mergeId)
        : QUndoCommand(text), m_controller(c), m_before(std::move(before)), m_after(std::move(after)),
          m_mergeId(mergeId)
    {}
    void undo() override { m_controller->applyDocument(m_before); }
    void redo() override { m_controller->applyDocument(m_after); }
    int id() const override { return m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override
    {
        if (other->id() != id() || m_mergeId < 0)
            return false;
        m_after = static_cast<const DocumentCommand*>(other)->m_after;
        return true;
    }

private:
    PlanController* m_controller;
    nlohmann::json m_before, m_after;
    int m_mergeId;
};

int mergeIdFor(const QString& path) { return int(qHash(path) & 0x3fffffff); }

} // namespace

nlohmann::json scenarioDiff(const nlohmann::json& defaults, const nlohmann::json& doc)
{
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : doc.items()) {
        const auto it = defaults.find(key);
        if (it == defaults.end() || key == "model") {
            if (it == defaults.end() || *it != value)
                out[key] = value;
            continue;
        }
        if (value.is_object() && it->is_object()) {
            auto sub = scenarioDiff(*it, value);
            if (!sub.empty())
                out[key] = sub;
        } else if (*it != value) {
            out[key] = value;
        }
    }
    return out;
}

PlanController::PlanController(QObject* parent) : QObject(parent), m_undo(new QUndoStack(this))
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(0);
    connect(&m_timer, &QTimer::timeout, this, &PlanController::recomputeNow);
    connect(m_undo, &QUndoStack::cleanChanged, this, &PlanController::fileStateChanged);
    m_autosave.setInterval(20000);
    connect(&m_autosave, &QTimer::timeout, this, &PlanController::autosaveNow);
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) {
        if (clean) {
            m_autosave.stop();
            QFile::remove(autosaveFile());
        } else {
            m_autosave.start();
        }
    });
    m_document = core::defaultScenarioJson();
    m_scenario = core::defaultScenario();
    m_plan = core::estimate(m_scenario);
}

PlanController::~PlanController() = default;

void PlanController::set(const QString& path, const nlohmann::json& value)
{
    nlohmann::json next = m_document;
    core::Errors errors;
    core::setPath(next, path.toStdString(), value, errors);
    if (!errors.empty()) {
        m_errors = errors;
        emit errorsChanged(m_errors);
        return;
    }
    // ZeRO stage or FSDP strategy: the control touched last decides, in the same undo step (core's rule).
    core::resolveShardingChoice(next, path.toStdString());
    if (next == m_document)
        return;
    m_undo->push(new DocumentCommand(this, m_document, next, tr("Change %1").arg(path), mergeIdFor(path)));
}

void PlanController::setDocument(const nlohmann::json& doc, const QString& undoText)
{
    if (doc == m_document)
        return;
    m_undo->push(new DocumentCommand(this, m_document, doc, undoText, -1));
}

void PlanController::applyLayout(const core::Layout& l)
{
    nlohmann::json doc = m_document;
    core::applyLayout(doc, l); // core's rule: the same change the search's own plans were made with
    setDocument(doc, tr("Apply layout TP %1 × PP %2 × CP %3 × DP %4").arg(l.tp).arg(l.pp).arg(l.cp).arg(l.dp));
}

void PlanController::applyDocument(const nlohmann::json& doc)
{
    m_document = doc;
    emit documentChanged();
    scheduleRecompute();
}

void PlanController::scheduleRecompute()
{
    if (!m_timer.isActive())
        m_timer.start();
}

void PlanController::recomputeNow()
{
    m_timer.stop();
    core::Errors errors;
    auto sc =
        core::parseScenario(m_document, core::builtinCatalog(), errors, m_baseDir.toStdString(),
                            [this](const std::string& path, std::string& error) { return cachedFile(path, error); });
    const bool changedErrors = errors.size() != m_errors.size() || !errors.empty() || !m_errors.empty();
    m_errors = std::move(errors);
    if (changedErrors)
        emit errorsChanged(m_errors);
    if (!m_errors.empty())
        return; // the last valid plan stays on screen
    m_scenario = std::move(sc);
    m_plan = core::estimate(m_scenario);
    emit planChanged(m_plan);
}

std::optional<std::string> PlanController::cachedFile(const std::string& path, std::string& error)
{
    const QFileInfo info(QString::fromStdString(path));
    if (!info.exists() || !info.isFile()) {
        m_files.erase(path);
        error = "cannot open file";
        return std::nullopt;
    }
    const qint64 modified = info.lastModified().toMSecsSinceEpoch();
    auto it = m_files.find(path);
    if (it != m_files.end() && it->second.size == info.size() && it->second.modifiedMs == modified)
        return it->second.text;
    auto text = core::readTextFile(path, error);
    if (!text) {
        m_files.erase(path);
        return std::nullopt;
    }
    if (m_files.size() > 32) // a handful of configs and profiles at most; never grows without bound
        m_files.clear();
    m_files[path] = {info.size(), modified, *text};
    return text;
}

bool PlanController::importHfConfig(const QString& file, QString* error)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error)
            *error = tr("Cannot open %1: %2").arg(file, f.errorString());
        return false;
    }
    core::Errors errors;
    const auto cfg = core::parseJsonLimited(f.readAll().toStdString(), file.toStdString(), errors);
    if (errors.empty())
        core::modelFromHfConfig(cfg, file.toStdString(), errors);
    if (!errors.empty()) {
        if (error)
            *error = QString::fromStdString(core::describe(errors.front()));
        return false;
    }
    nlohmann::json doc = m_document;
    doc["model"] = {{"hf_config", QFileInfo(file).absoluteFilePath().toStdString()}};
    setDocument(doc, tr("Import %1").arg(QFileInfo(file).fileName()));
    return true;
}

void PlanController::newScenario()
{
    m_fileName.clear();
    m_baseDir.clear();
    m_undo->clear();
    applyDocument(core::defaultScenarioJson());
    recomputeNow();
    m_undo->setClean();
    emit fileStateChanged();
}

bool PlanController::resetDocument(const nlohmann::json& doc, const QString& fileName)
{
    core::Errors errors;
    const QString baseDir = fileName.isEmpty() ? QString() : QFileInfo(fileName).absolutePath();
    core::parseScenario(doc, core::builtinCatalog(), errors, baseDir.toStdString());
    if (!errors.empty())
        return false;
    m_fileName = fileName;
    m_baseDir = baseDir;
    m_undo->clear();
    applyDocument(doc);
    recomputeNow();
    m_undo->setClean();
    emit fileStateChanged();
    return true;
}

bool PlanController::open(const QString& file, QString* error)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error)
            *error = tr("Cannot open %1: %2").arg(file, f.errorString());
        return false;
    }
    core::Errors errors;
    const auto merged = core::parseScenarioText(f.readAll().toStdString(), file.toStdString(), errors);
    const QString baseDir = QFileInfo(file).absolutePath();
    if (merged)
        core::parseScenario(*merged, core::builtinCatalog(), errors, baseDir.toStdString());
    if (!errors.empty()) {
        if (error) {
            QStringList lines;
            for (const auto& e : errors)
                lines << QString::fromStdString(core::describe(e));
            *error = lines.join(QLatin1Char('\n'));
        }
        return false; // nothing changes: the current scenario stays
    }
    m_fileName = QFileInfo(file).absoluteFilePath();
    m_baseDir = baseDir;
    m_undo->clear();
    applyDocument(*merged);
    recomputeNow();
    m_undo->setClean();
    addRecent(m_fileName);
    emit fileStateChanged();
    return true;
}

bool PlanController::save(const QString& file, QString* error)
{
    QSaveFile f(file);
    if (!f.open(QIODevice::WriteOnly)) {
        if (error)
            *error = tr("Cannot write %1: %2").arg(file, f.errorString());
        return false;
    }
    nlohmann::json out = scenarioDiff(core::defaultScenarioJson(), m_document);
    out["schema"] = "napkin.scenario/1";
    const QByteArray bytes = QByteArray::fromStdString(out.dump(1) + "\n");
    if (f.write(bytes) != bytes.size() || !f.commit()) {
        if (error)
            *error = tr("Cannot write %1: %2").arg(file, f.errorString());
        return false; // QSaveFile leaves the previous file untouched
    }
    m_fileName = QFileInfo(file).absoluteFilePath();
    m_baseDir = QFileInfo(file).absolutePath();
    m_undo->setClean();
    addRecent(m_fileName);
    emit fileStateChanged();
    return true;
}

bool PlanController::isModified() const { return !m_undo->isClean(); }

QString PlanController::autosaveFile()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave.napkin.json");
}

bool PlanController::autosaveNow()
{
    if (!isModified())
        return false;
    QDir().mkpath(QFileInfo(autosaveFile()).absolutePath());
    QSaveFile f(autosaveFile());
    if (!f.open(QIODevice::WriteOnly))
        return false;
    const nlohmann::json record = {{"file", m_fileName.toStdString()}, {"document", m_document}};
    const QByteArray bytes = QByteArray::fromStdString(record.dump());
    return f.write(bytes) == bytes.size() && f.commit();
}

bool PlanController::recoverAutosave()
{
    QFile f(autosaveFile());
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const auto record = core::parseJsonLimited(f.readAll().toStdString());
    f.close();
    if (!record.is_object() || !record.contains("document") || !record["document"].is_object())
        return false;
    const QString file = record.value("file", std::string()).empty()
                             ? QString()
                             : QString::fromStdString(record["file"].get<std::string>());
    const nlohmann::json& doc = record["document"];
    // The saved state underneath is the file the work belonged to, else the defaults.
    QString ignored;
    if ((file.isEmpty() || !open(file, &ignored)) && !resetDocument(core::defaultScenarioJson(), QString()))
        return false;
    if (doc != m_document) // one undo step back to the last saved state; the window shows unsaved work
        m_undo->push(new DocumentCommand(this, m_document, doc, tr("Recovered unsaved changes"), -1));
    recomputeNow();
    return true;
}

QStringList PlanController::recentFiles() const
{
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void PlanController::addRecent(const QString& file)
{
    QSettings s;
    QStringList list = s.value(QStringLiteral("recentFiles")).toStringList();
    list.removeAll(file);
    list.prepend(file);
    while (list.size() > 8)
        list.removeLast();
    s.setValue(QStringLiteral("recentFiles"), list);
}

void PlanController::setUnits(Units u)
{
    if (u == m_units)
        return;
    m_units = u;
    emit unitsChanged();
}

QString PlanController::formatBytes(double bytes) const { return charts::formatBytes(bytes, m_units); }

void PlanController::showDerivation(const QString& quantity)
{
    m_selected = quantity;
    emit derivationRequested(quantity);
}

} // namespace napkin::app
